// Device names: what parses, and the refusals a CPU-only build or a GPU-less machine gives.
#include "graphloom/base/device.h"

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

}  // namespace
}  // namespace graphloom
