// The epoch's console line: every figure of the record, in the task's names, and the data
// path's counters only when the record carries them.
#include "graphloom/train/result_report.h"

#include <gtest/gtest.h>

#include "graphloom/train/task.h"

namespace graphloom::train {
namespace {

TEST(ResultReport, EpochLineNamesEveryFigureOfTheRecord) {
  const TaskNames names{.items = "seeds",
                        .validation_key = "val_acc",
                        .validation = "val acc",
                        .score = "validation accuracy",
                        .train_metrics = {{"train_acc", "train acc"}}};
  nlohmann::json record = {
      {"loss", 0.41}, {"train_acc", 0.875}, {"val_acc", 0.8125}, {"seeds_per_s", 9000.4}};
  EXPECT_EQ(describe_epoch(names, 2, record),
            "epoch   3  loss 0.4100  train acc 0.8750  val acc 0.8125  9000 seeds/s");
  record.erase("val_acc");  // epochs between validations
  record["io"] = {{"remote_bytes", 1.2e6}, {"disk_bytes", 3.4e6}};
  record["cache_hit_rate"] = 0.4;
  EXPECT_EQ(describe_epoch(names, 0, record),
            "epoch   1  loss 0.4100  train acc 0.8750  9000 seeds/s  remote 1.2 MB  disk 3.4 MB"
            "  cache hits 40.0%");
}

}  // namespace
}  // namespace graphloom::train
