// Device names: what parses, and the refusals a CPU-only build or a GPU-less machine gives.
#include "graphloom/base/device.h"
#include "graphloom/base/host_memory.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "graphloom/base/error.h"

namespace graphloom {
namespace {

TEST(Device, CpuParsesEverywhere) { EXPECT_TRUE(parse_device("cpu").is_cpu()); }

TEST(Device, MalformedNamesAreOptionErrorsNamingTheField) {
  for (const char* name : {"gpu", "cuda:", "cuda:x", "CPU", "", "cuda:-1"}) {
    try {
      parse_device(name, "--device");
      ADD_FAILURE() << name << " parsed";
    } catch (const OptionError& e) {
      EXPECT_EQ(e.field(), "--device") << name;
    }
  }
}

TEST(Device, CudaIsRefusedWithTheReasonWhenThereIsNoGpu) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "this machine has a CUDA device";
  try {
    parse_device("cuda");
    ADD_FAILURE() << "cuda parsed without a CUDA device";
  } catch (const OptionError& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.field(), "device");
    EXPECT_TRUE(message.find("CPU-only torch") != std::string::npos ||
                message.find("no CUDA device") != std::string::npos)
        << message;
    EXPECT_NE(message.find("cpu"), std::string::npos) << message;
  }
}

TEST(Device, EachLocalRankGetsItsOwnGpuUnlessOneIsNamed) {
  const c10::Device cuda(c10::DeviceType::CUDA);
  EXPECT_EQ(device_for_local_rank(cuda, 0, 2), c10::Device("cuda:0"));
  EXPECT_EQ(device_for_local_rank(cuda, 3, 2), c10::Device("cuda:1"));
  EXPECT_EQ(device_for_local_rank(cuda, 5, 8), c10::Device("cuda:5"));
  EXPECT_EQ(device_for_local_rank(c10::Device("cuda:1"), 0, 4), c10::Device("cuda:1"));
  EXPECT_TRUE(device_for_local_rank(c10::Device("cpu"), 3, 2).is_cpu());
}

TEST(Device, CudaIndexPastTheLastDeviceIsRefused) {
  EXPECT_THROW(parse_device("cuda:4096"), OptionError);
}

// On the CPU, host memory "on the device" is the tensor itself: no copy, no registration.
TEST(Device, HostMemoryOnTheCpuIsTheTensorItself) {
  const at::Tensor host = at::arange(100, at::kFloat);
  const at::Tensor view = host_memory_on_device(host, c10::Device("cpu"), "graph_placement");
  EXPECT_EQ(view.data_ptr(), host.data_ptr());
  EXPECT_THROW(host_memory_on_device(at::Tensor(), c10::Device("cpu"), "x"), Error);
}

TEST(Device, HostMemoryOnACudaDeviceIsRefusedByFieldWithoutOne) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "this machine has a CUDA device";
  try {
    host_memory_on_device(at::ones({4}), c10::Device("cuda:0"), "graph_placement");
    ADD_FAILURE() << "pinned on a machine without CUDA";
  } catch (const OptionError& e) {
    EXPECT_EQ(e.field(), "graph_placement");
  }
  EXPECT_THROW(free_device_bytes(c10::Device("cuda:0")), OptionError);
}

}  // namespace
}  // namespace graphloom
