#include <filesystem>
#include <stdexcept>

#include <gtest/gtest.h>

#include "health/pci_address.hpp"

namespace commcert {
namespace {

const std::filesystem::path kHealthy =
    std::filesystem::path(COMMCERT_SOURCE_DIR) / "tests/fixtures/sysfs/healthy";

TEST(PciAddress, OneSpellingForCudaNvmlAndSysfs) {
  EXPECT_EQ(normalize_pci_bus_id("0000:3B:00.0"), "0000:3b:00.0");      // CUDA
  EXPECT_EQ(normalize_pci_bus_id("00000000:3B:00.0"), "0000:3b:00.0");  // NVML
  EXPECT_EQ(normalize_pci_bus_id("0000:3b:00.0"), "0000:3b:00.0");      // sysfs, hwloc
  EXPECT_EQ(normalize_pci_bus_id("3b:00.1"), "0000:3b:00.1");
  EXPECT_FALSE(normalize_pci_bus_id("GPU-1234").has_value());
  EXPECT_FALSE(normalize_pci_bus_id("0000:3b:40.0").has_value());  // device > 31
  EXPECT_FALSE(normalize_pci_bus_id("").has_value());
}

TEST(PciAddress, NumaNodeFromSysfsAndNoneForMinusOne) {
  EXPECT_EQ(pci_numa_node(kHealthy, "00000000:1B:00.0"), 0);
  EXPECT_EQ(pci_numa_node(kHealthy, "0000:9c:00.0"), 1);
  EXPECT_FALSE(pci_numa_node(kHealthy, "0000:aa:00.0").has_value());  // the kernel says -1
  EXPECT_FALSE(pci_numa_node(kHealthy, "0000:ff:00.0").has_value());  // no such device
}

TEST(PciAddress, CpuListsAsTheKernelWritesThem) {
  EXPECT_EQ(parse_cpu_list("0-3,8-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ(parse_cpu_list("5"), std::vector<int>{5});
  EXPECT_TRUE(parse_cpu_list("").empty());
  EXPECT_THROW((void)parse_cpu_list("3-1"), std::invalid_argument);
  EXPECT_THROW((void)parse_cpu_list("a-b"), std::invalid_argument);
  EXPECT_EQ(numa_node_cpus(kHealthy, 1), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_TRUE(numa_node_cpus(kHealthy, 7).empty());
}

}  // namespace
}  // namespace commcert
