#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "health/node_gpu_index.hpp"
#include "nvml_fake.hpp"
#include "temp_directory.hpp"

namespace commcert {
namespace {

using testing::fake_nvml;
using testing::use_nvml_script;

// A sysfs PCI device directory with its vendor and class files.
void add_pci_device(const std::filesystem::path& sysfs, const std::string& bus_id,
                    const std::string& vendor, const std::string& pci_class) {
  const auto dir = sysfs / "bus/pci/devices" / bus_id;
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "vendor") << vendor << "\n";
  std::ofstream(dir / "class") << pci_class << "\n";
}

// An HGX-like node seen through sysfs: GPUs, an NVSwitch and a NIC, listed out of order.
class EightWayNode : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto& root = sysfs_.path();
    add_pci_device(root, "0000:9a:00.0", "0x10de", "0x030200");
    add_pci_device(root, "0000:1b:00.0", "0x10de", "0x030200");
    add_pci_device(root, "0000:05:00.0", "0x10de", "0x068000");  // NVSwitch: not a GPU
    add_pci_device(root, "0000:3b:00.0", "0x15b3", "0x020700");  // ConnectX: not NVIDIA
    add_pci_device(root, "0000:43:00.0", "0x10de", "0x030000");  // a VGA-class GPU counts
    saved_visible_ = std::getenv("CUDA_VISIBLE_DEVICES")
                         ? std::optional<std::string>(std::getenv("CUDA_VISIBLE_DEVICES"))
                         : std::nullopt;
  }
  void TearDown() override {
    if (saved_visible_) {
      ::setenv("CUDA_VISIBLE_DEVICES", saved_visible_->c_str(), 1);
    } else {
      ::unsetenv("CUDA_VISIBLE_DEVICES");
    }
  }

  test_support::TempDirectory sysfs_;
  std::optional<std::string> saved_visible_;
};

TEST_F(EightWayNode, SysfsListsOnlyNvidiaGpusInBusOrder) {
  EXPECT_EQ(nvidia_gpus_in_sysfs(sysfs_.path()),
            (std::vector<std::string>{"0000:1b:00.0", "0000:43:00.0", "0000:9a:00.0"}));
  EXPECT_TRUE(nvidia_gpus_in_sysfs(sysfs_.path() / "missing").empty());
}

TEST_F(EightWayNode, NvmlIndexWinsWhateverThisProcessSees) {
  use_nvml_script("two_h200.json");  // NVML: 1B -> 0, 9C -> 1
  const NodeGpuIndex index(fake_nvml("current"), sysfs_.path());
  // One process driving both GPUs: CUDA ordinals 0 and 1.
  EXPECT_EQ(index.index_of("0000:1b:00.0", 0), 0);
  EXPECT_EQ(index.index_of("0000:9c:00.0", 1), 1);
  // One process per GPU with CUDA_VISIBLE_DEVICES=1: the second GPU is this process's device 0.
  ::setenv("CUDA_VISIBLE_DEVICES", "1", 1);
  EXPECT_EQ(index.index_of("0000:9c:00.0", 0), 1);
  // CUDA's 4-digit and NVML's 8-digit domain spellings name the same GPU.
  EXPECT_EQ(index.index_of("00000000:9C:00.0", 0), 1);
}

TEST_F(EightWayNode, WithoutNvmlTheBusOrderOfSysfsGivesTheIndex) {
  const NodeGpuIndex index("/nonexistent/libnvidia-ml.so.1", sysfs_.path());
  ::setenv("CUDA_VISIBLE_DEVICES", "2", 1);  // one GPU per process: each is its device 0
  EXPECT_EQ(index.index_of("0000:9a:00.0", 0), 2);
  EXPECT_EQ(index.index_of("0000:43:00.0", 0), 1);
  EXPECT_EQ(index.index_of("0000:1b:00.0", 0), 0);
}

TEST_F(EightWayNode, AGpuNeitherKnowsIsNumberedByCudaVisibleDevices) {
  const NodeGpuIndex index("/nonexistent/libnvidia-ml.so.1", sysfs_.path() / "missing");
  ::setenv("CUDA_VISIBLE_DEVICES", "4,5", 1);
  EXPECT_EQ(index.index_of("0000:c1:00.0", 1), 5);
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(index.index_of("0000:c1:00.0", 1), 1);
  ::setenv("CUDA_VISIBLE_DEVICES", "GPU-8a1c2e3f-0000-4b5c-9d6e-0123456789ab", 1);
  EXPECT_EQ(index.index_of("0000:c1:00.0", 0), 0);  // a UUID says nothing: the ordinal stays
}

TEST(VisibleDeviceIndex, ReadsPlainIndicesOnly) {
  EXPECT_EQ(visible_device_index(std::nullopt, 3), 3);
  EXPECT_EQ(visible_device_index("", 3), 3);
  EXPECT_EQ(visible_device_index("4,5,6", 0), 4);
  EXPECT_EQ(visible_device_index("4,5,6", 2), 6);
  EXPECT_EQ(visible_device_index("4,5,6", 3), std::nullopt);  // past the list
  EXPECT_EQ(visible_device_index("4,,6", 1), std::nullopt);
  EXPECT_EQ(visible_device_index("4,x5", 1), std::nullopt);
  EXPECT_EQ(visible_device_index("4,-1", 1), std::nullopt);
  EXPECT_EQ(visible_device_index("MIG-1234,5", 0), std::nullopt);
}

TEST(PositionInBusOrder, MatchesAnySpellingAndRejectsNonAddresses) {
  const std::vector<std::string> gpus{"0000:1b:00.0", "0000:9a:00.0"};
  EXPECT_EQ(position_in_bus_order(gpus, "00000000:9A:00.0"), 1);
  EXPECT_EQ(position_in_bus_order(gpus, "0000:1b:00.0"), 0);
  EXPECT_EQ(position_in_bus_order(gpus, "0000:1c:00.0"), std::nullopt);
  EXPECT_EQ(position_in_bus_order(gpus, "GPU 0"), std::nullopt);
}

}  // namespace
}  // namespace commcert
