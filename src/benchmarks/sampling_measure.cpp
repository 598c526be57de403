// One single-threaded sampling worker per thread: batches are independent, so this scales
// without synchronisation inside a batch.
#include "sampling_measure.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "graphloom/base/timer.h"

namespace graphloom::benchmarks {

SamplingFigures measure_sampling(const sampling::NeighborSampler& sampler,
                                 const std::vector<at::Tensor>& seeds, int64_t total, int threads,
                                 const std::vector<at::Tensor>& seed_times) {
  const auto times_of = [&](int64_t i) {
    return seed_times.empty() ? at::Tensor() : seed_times[static_cast<std::size_t>(i)];
  };
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> edges{0};
  std::atomic<int64_t> inputs{0};
  std::atomic<int64_t> seeds_done{0};
  sampler.sample(seeds[0], times_of(0), 0, 0);  // warm-up: workspace allocation, page faults
  Timer timer;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      omp_set_num_threads(1);
      for (int64_t i = next++; i < total; i = next++) {
        const sampling::MiniBatch batch =
            sampler.sample(seeds[i], times_of(i), 0, static_cast<uint64_t>(i));
        edges += batch.num_sampled_edges();
        inputs += batch.input_nodes().numel();
        seeds_done += batch.seeds.numel();
      }
    });
  }
  for (auto& worker : workers) worker.join();
  return {timer.seconds(), total, seeds_done, edges, inputs};
}

double median_seeds_per_second(const std::vector<SamplingFigures>& runs) {
  std::vector<double> rates;
  for (const auto& run : runs) rates.push_back(static_cast<double>(run.seeds) / run.seconds);
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

}  // namespace graphloom::benchmarks
