// The per-epoch metrics log (JSON lines, one object per epoch) and its SVG plot.
#pragma once

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "graphloom/train/train_options.h"

namespace graphloom::train {

// The per-stage seconds as the metrics log and `--result-json` name them ("sample", "fetch",
// "wait", "forward", "backward", "optimizer", "allreduce").
nlohmann::json stage_times_json(const StageTimes& times);

class MetricsLog {
 public:
  // Opens `path` for appending (a resumed run continues the same log); empty path: no log.
  explicit MetricsLog(const std::filesystem::path& path, bool append);
  // Writes one line and flushes it, so a crash loses at most the running epoch.
  void write(const nlohmann::json& record);

 private:
  std::ofstream out_;
};

std::vector<nlohmann::json> read_metrics_log(const std::filesystem::path& path);

// Draws loss and accuracy curves from a metrics log into an SVG file (written atomically).
void plot_metrics(const std::filesystem::path& log, const std::filesystem::path& svg);

}  // namespace graphloom::train
