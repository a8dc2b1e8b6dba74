#include <string>

#include <gtest/gtest.h>

#include "bench/device_assignment.hpp"
#include "cli/backend.hpp"
#include "core/errors.hpp"

namespace commcert {
namespace {

TEST(DeviceAssignment, OneProcessPerGpuTakesItsLocalIndex) {
  EXPECT_EQ(assign_devices(8, 3, 8, 1).devices, std::vector<int>{3});
  EXPECT_EQ(assign_devices(8, 1, 2, 4).devices, (std::vector<int>{4, 5, 6, 7}));
}

TEST(DeviceAssignment, ProcessesRestrictedByCudaVisibleDevicesTakeWhatTheySee) {
  EXPECT_EQ(assign_devices(1, 5, 8, 1).devices, std::vector<int>{0});
  EXPECT_EQ(assign_devices(2, 1, 4, 2).devices, (std::vector<int>{0, 1}));
}

TEST(DeviceAssignment, AllGpusNeedsOneProcessPerHost) {
  EXPECT_EQ(assign_devices(4, 0, 1, 0).devices, (std::vector<int>{0, 1, 2, 3}));
  const auto two = assign_devices(4, 0, 2, 0);
  EXPECT_TRUE(two.devices.empty());
  EXPECT_NE(two.error.find("-g 0"), std::string::npos);
}

TEST(DeviceAssignment, TooFewGpusIsAnErrorNotAGuess) {
  const auto a = assign_devices(4, 0, 8, 1);
  EXPECT_TRUE(a.devices.empty());
  EXPECT_NE(a.error.find("need 8 GPUs, but 4 are visible"), std::string::npos) << a.error;
  EXPECT_TRUE(assign_devices(0, 0, 1, 1).devices.empty());
  EXPECT_TRUE(assign_devices(0, 0, 1, 1).error.empty());  // no GPU at all: the caller skips
}

TEST(GpuUuid, UsesNvmlsSpelling) {
  const std::array<unsigned char, 16> bytes = {0x8a, 0x1c, 0x2e, 0x3f, 0x00, 0x00, 0x4b, 0x5c,
                                               0x9d, 0x6e, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab};
  EXPECT_EQ(format_gpu_uuid(bytes), "GPU-8a1c2e3f-0000-4b5c-9d6e-0123456789ab");
}

TEST(NcclDevices, TheSweepUsesTheAssignmentOfBurnAndMembw) {
  EXPECT_EQ(nccl_devices(8, 3, 8, 1), std::vector<int>{3});
  EXPECT_EQ(nccl_devices(8, 1, 2, 4), (std::vector<int>{4, 5, 6, 7}));
  // srun --gpus-per-task=1: each process sees only its own GPU.
  EXPECT_EQ(nccl_devices(1, 5, 8, 1), std::vector<int>{0});
}

TEST(NcclDevices, MoreRanksOnANodeThanGpusIsAUsageErrorNotAWrapAround) {
  // 8 ranks on a 4-GPU node: rank 5 used to take GPU 5 % 4 = 1, rank 1's, and NCCL init died
  // with "Duplicate GPU detected".
  try {
    (void)nccl_devices(4, 5, 8, 1);
    FAIL() << "8 ranks on 4 GPUs were accepted";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("need 8 GPUs, but 4 are visible"), std::string::npos)
        << error.what();
  }
  EXPECT_THROW((void)nccl_devices(6, 1, 2, 4), UsageError);  // -g 4 twice on 6 GPUs
  EXPECT_THROW((void)nccl_devices(0, 0, 1, 1), UsageError);
}

}  // namespace
}  // namespace commcert
