// What a training job reports when it ends, as the text `graphloom train` prints: the model,
// epochs and throughput, validation and test figures of its task, and where the time went.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "graphloom/train/train_job.h"

namespace graphloom::train {

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
