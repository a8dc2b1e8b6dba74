#include <string>
#include <vector>

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

// CUDA's own order (fastest first) need not be PCI order: with the visible devices' addresses
// shuffled, local rank i still drives the i-th GPU by PCI address, each GPU exactly once.
TEST(DeviceAssignment, EachLocalRankDrivesTheGpuAtItsPlaceInPciOrder) {
  const std::vector<std::string> by_ordinal = {"0000:b3:00.0", "0000:1b:00.0", "0000:5e:00.0",
                                               "0000:3b:00.0"};
  std::vector<int> driven;
  for (int rank = 0; rank < 4; ++rank) {
    const DeviceAssignment a = in_pci_order(assign_devices(4, rank, 4, 1), by_ordinal);
    ASSERT_EQ(a.devices.size(), 1u);
    driven.push_back(a.devices.front());
  }
  EXPECT_EQ(driven, (std::vector<int>{1, 3, 2, 0}));  // 1b, 3b, 5e, b3
  // -g 2: the slots of one process are consecutive in PCI order too.
  EXPECT_EQ(in_pci_order(assign_devices(4, 1, 2, 2), by_ordinal).devices, (std::vector<int>{2, 0}));
  // In PCI order already: nothing moves.
  EXPECT_EQ(in_pci_order(assign_devices(4, 2, 4, 1),
                         {"0000:1b:00.0", "0000:3b:00.0", "0000:5e:00.0", "0000:b3:00.0"})
                .devices,
            std::vector<int>{2});
}

// Without every visible device's address, CUDA's order is kept rather than guessed.
TEST(DeviceAssignment, AnUnknownAddressKeepsCudasOrder) {
  EXPECT_EQ(in_pci_order(assign_devices(3, 0, 3, 1), {"0000:b3:00.0", "", "0000:1b:00.0"}).devices,
            std::vector<int>{0});
  EXPECT_EQ(in_pci_order(assign_devices(4, 3, 4, 1), {"0000:b3:00.0", "0000:1b:00.0"}).devices,
            std::vector<int>{3});
}

}  // namespace
}  // namespace commcert
