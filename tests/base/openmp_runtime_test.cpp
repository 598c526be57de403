// One OpenMP runtime in the process: graphloom's `#pragma omp` loops and ATen's parallel_for
// share libtorch's libgomp (cmake/TorchFromPython.cmake), so there is one thread pool, never
// two pools oversubscribing the cores.
#include <gtest/gtest.h>
#include <omp.h>

#include <ATen/Parallel.h>
#include <atomic>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace graphloom {
namespace {

TEST(OpenMpRuntime, OneLibgompIsLoaded) {
  const std::vector<std::string> found = graphloom::testing::loaded_objects_named("libgomp");
  ASSERT_EQ(found.size(), 1u) << "libgomp objects: " << ::testing::PrintToString(found);
}

TEST(OpenMpRuntime, AtenParallelForRunsInsideOurOpenMpRuntime) {
  const int saved = at::get_num_threads();
  at::set_num_threads(2);
  std::atomic<int> parallel_bodies = 0;
  at::parallel_for(0, 2, /*grain_size=*/1, [&](int64_t, int64_t) {
    // omp_in_parallel() asks the libgomp this file links: true only if ATen's pool is its pool.
    if (omp_in_parallel()) ++parallel_bodies;
  });
  EXPECT_EQ(parallel_bodies.load(), 2);
  EXPECT_EQ(omp_get_max_threads(), at::get_num_threads());
  at::set_num_threads(saved);
}

}  // namespace
}  // namespace graphloom
