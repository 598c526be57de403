// JSON-lines metrics log and a dependency-free SVG plot of it.
#include "graphloom/train/metrics_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "graphloom/base/atomic_output.h"
#include "graphloom/base/error.h"

namespace graphloom::train {

nlohmann::json stage_times_json(const StageTimes& t) {
  return {{"sample", t.sample},      {"fetch", t.fetch},       {"wait", t.wait},
          {"forward", t.forward},    {"backward", t.backward}, {"optimizer", t.optimizer},
          {"allreduce", t.allreduce}};
}

MetricsLog::MetricsLog(const std::filesystem::path& path, bool append) {
  if (path.empty()) return;
  out_.open(path, append ? std::ios::app : std::ios::trunc);
  GL_CHECK(out_.good(), "cannot open metrics log '{}'", path.string());
}

void MetricsLog::write(const nlohmann::json& record) {
  if (!out_.is_open()) return;
  out_ << record.dump() << "\n";
  out_.flush();
}

std::vector<nlohmann::json> read_metrics_log(const std::filesystem::path& path) {
  std::ifstream in(path);
  GL_CHECK(in.good(), "cannot open metrics log '{}'", path.string());
  std::vector<nlohmann::json> records;
  std::string line;
  int64_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    try {
      records.push_back(nlohmann::json::parse(line));
    } catch (const nlohmann::json::exception& e) {
      GL_THROW("'{}' line {}: not a JSON object: {}", path.string(), number, e.what());
    }
  }
  GL_CHECK(!records.empty(), "metrics log '{}' has no records", path.string());
  return records;
}

namespace {

struct Series {
  std::string name;
  std::string color;
  std::vector<std::pair<double, double>> points;
};

// One panel: axes, a few ticks, one polyline per series, a legend.
std::string panel(const std::string& title, const std::vector<Series>& series, double x0, double y0,
                  double width, double height) {
  double min_x = 1e300, max_x = -1e300, min_y = 1e300, max_y = -1e300;
  for (const auto& s : series) {
    for (const auto& [x, y] : s.points) {
      min_x = std::min(min_x, x), max_x = std::max(max_x, x);
      min_y = std::min(min_y, y), max_y = std::max(max_y, y);
    }
  }
  if (min_x > max_x) return "";
  if (max_x == min_x) max_x = min_x + 1;
  if (max_y == min_y) max_y = min_y + 1;
  const double pad = 0.05 * (max_y - min_y);
  min_y -= pad, max_y += pad;
  auto px = [&](double x) { return x0 + 50 + (x - min_x) / (max_x - min_x) * (width - 70); };
  auto py = [&](double y) {
    return y0 + height - 30 - (y - min_y) / (max_y - min_y) * (height - 60);
  };
  std::string svg = fmt::format(
      "<text x='{}' y='{}' font-size='14' font-weight='bold'>{}</text>\n"
      "<line x1='{}' y1='{}' x2='{}' y2='{}' stroke='black'/>\n"
      "<line x1='{}' y1='{}' x2='{}' y2='{}' stroke='black'/>\n",
      x0 + 50, y0 + 18, title, px(min_x), py(min_y), px(max_x), py(min_y), px(min_x), py(min_y),
      px(min_x), py(max_y));
  for (int t = 0; t <= 4; ++t) {
    const double y = min_y + (max_y - min_y) * t / 4;
    svg += fmt::format("<text x='{}' y='{}' font-size='10' text-anchor='end'>{:.3g}</text>\n",
                       x0 + 45, py(y) + 3, y);
    const double x = min_x + (max_x - min_x) * t / 4;
    svg += fmt::format("<text x='{}' y='{}' font-size='10' text-anchor='middle'>{:.3g}</text>\n",
                       px(x), py(min_y) + 14, x);
  }
  for (std::size_t i = 0; i < series.size(); ++i) {
    std::string points;
    for (const auto& [x, y] : series[i].points)
      points += fmt::format("{:.1f},{:.1f} ", px(x), py(y));
    svg += fmt::format("<polyline fill='none' stroke='{}' stroke-width='2' points='{}'/>\n",
                       series[i].color, points);
    svg += fmt::format("<text x='{}' y='{}' font-size='11' fill='{}'>{}</text>\n", x0 + width - 130,
                       y0 + 35 + 14 * static_cast<double>(i), series[i].color, series[i].name);
  }
  return svg;
}

Series series_of(const std::vector<nlohmann::json>& records, const std::string& key,
                 const std::string& name, const std::string& color) {
  Series s{name, color, {}};
  for (const auto& r : records) {
    if (r.contains(key) && r[key].is_number()) {
      s.points.emplace_back(r.value("epoch", 0.0), r[key].get<double>());
    }
  }
  return s;
}

}  // namespace

void plot_metrics(const std::filesystem::path& log, const std::filesystem::path& svg) {
  const auto records = read_metrics_log(log);
  std::string body =
      "<svg xmlns='http://www.w3.org/2000/svg' width='900' height='340' "
      "font-family='sans-serif'>\n<rect width='900' height='340' fill='white'/>\n";
  body += panel("training loss", {series_of(records, "loss", "loss", "#d62728")}, 0, 0, 450, 340);
  body += panel("accuracy",
                {series_of(records, "train_acc", "train", "#1f77b4"),
                 series_of(records, "val_acc", "validation", "#2ca02c")},
                450, 0, 450, 340);
  body += "</svg>\n";
  AtomicFile out(svg);
  out.write(body.data(), body.size());
  out.commit();
}

}  // namespace graphloom::train
