// What a training job reports when it ends, as the text `graphloom train` prints: the model,
// epochs and throughput, validation and test figures of its task, and where the time went.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "graphloom/train/train_job.h"

namespace graphloom::train {

struct TaskNames;  // task.h

// One epoch's console line from its metrics-log record (Trainer): "epoch   3  loss 0.4100  train
// acc 0.8800  val acc 0.8100  9000 seeds/s", then the data path's counters when the record has
// them ("  remote 1.2 MB  disk 3.4 MB  cache hits 40.0%").
std::string describe_epoch(const TaskNames& names, int64_t epoch, const nlohmann::json& record);

// Where rank 0's training time went; with `world_size` > 1 also the allreduce time that
// backward did not hide.
std::string describe_time_split(const StageTimes& times, int world_size);

// The job's summary, ending with the time split and the total `seconds`.
std::string describe_result(const TrainJob& job, const TrainJobResult& result, int world_size,
                            double seconds);

// The same figures as JSON (`graphloom train --result-json`), for scripts: "task", "model",
// "world_size", "seconds", "epochs_run", "best_epoch", the task's scores ("test_acc",
// "test_f1", "best_val_acc" or "test_auc", "test_hits", "test_mrr", "best_val_auc"), its
// throughput ("seeds_per_second" or "edges_per_second") and "time" per stage in seconds.
nlohmann::json result_json(const TrainJob& job, const TrainJobResult& result, int world_size,
                           double seconds);

}  // namespace graphloom::train
