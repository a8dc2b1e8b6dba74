#include <cstdlib>

#include <gtest/gtest.h>

#include "health/node_health.hpp"
#include "nvml_fake.hpp"

namespace commcert {
namespace {

using testing::fake_nvml;
using testing::fixture;
using testing::use_nvml_script;

RecordOrigin origin() {
  RecordOrigin o;
  o.run_id = "test";
  o.host = "node7";
  return o;
}

std::vector<Json> of_component(const std::vector<Json>& records, const std::string& component) {
  std::vector<Json> out;
  for (const auto& r : records) {
    if (r.value("component", "") == component) out.push_back(r);
  }
  return out;
}

TEST(NodeHealth, WithoutDriverOrRdmaEveryComponentSaysWhyItWasSkipped) {
  HealthOptions options;
  options.sysfs_root = fixture("sysfs/no_rdma");
  options.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  const auto records = node_health_records(collect_node_health(options), origin());
  const auto gpus = of_component(records, "gpu");
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0]["status"], "skipped");
  EXPECT_EQ(gpus[0]["reason"].get<std::string>().rfind("no NVIDIA driver: ", 0), 0u);
  EXPECT_TRUE(gpus[0]["gpu"].is_null());
  const auto ports = of_component(records, "ib_port");
  ASSERT_EQ(ports.size(), 1u);
  EXPECT_EQ(ports[0]["status"], "skipped");
  EXPECT_NE(ports[0]["reason"].get<std::string>().find("no RDMA devices under"), std::string::npos);
  const auto node = of_component(records, "node");
  ASSERT_EQ(node.size(), 1u);
  EXPECT_EQ(node[0]["status"], "ok");
  EXPECT_TRUE(node[0]["gpu_count"].is_null());
  EXPECT_EQ(node[0]["ib_port_count"], 0);
  EXPECT_EQ(records.back()["component"], "node");
}

TEST(NodeHealth, AHealthyNodeHasARecordPerGpuAndPort) {
  use_nvml_script("two_h200.json");
  HealthOptions options;
  options.sysfs_root = fixture("sysfs/healthy");
  options.nvml_library = fake_nvml("current");
  const NodeHealth health = collect_node_health(options);
  ASSERT_EQ(health.gpu_count, 2u);
  const auto records = node_health_records(health, origin());
  const auto gpus = of_component(records, "gpu");
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0]["status"], "ok");
  EXPECT_EQ(gpus[0]["gpu"]["index"], 0);
  EXPECT_EQ(gpus[0]["gpu"]["pci_bus_id"], "0000:1b:00.0");
  EXPECT_EQ(gpus[0]["uuid"], "GPU-8a1c2e3f-0000-4b5c-9d6e-0123456789ab");
  EXPECT_EQ(gpus[0]["xid_events"][0]["xid"], 79);  // arrived while the tool ran
  EXPECT_EQ(gpus[0]["ecc"]["aggregate"]["corrected"], 12);
  EXPECT_EQ(gpus[1]["remapped_rows"]["pending"], true);
  EXPECT_FALSE(gpus[0].contains("lost"));  // written only for a lost GPU
  EXPECT_TRUE(gpus[1]["serial"].is_null());
  EXPECT_EQ(gpus[1]["query_errors"][0]["query"], "serial");
  const auto ports = of_component(records, "ib_port");
  ASSERT_EQ(ports.size(), 4u);
  EXPECT_EQ(ports[0]["device"], "mlx5_0");
  EXPECT_EQ(ports[0]["state"], "ACTIVE");
  EXPECT_DOUBLE_EQ(ports[0]["rate_gbps"].get<double>(), 400);
  EXPECT_EQ(ports[0]["counters"]["symbol_error"], 0);
  const auto node = of_component(records, "node");
  EXPECT_EQ(node[0]["gpu_count"], 2);
  EXPECT_EQ(node[0]["ib_port_count"], 4);
}

TEST(NodeHealth, ALostGpuIsAnErrorRecordNamingIt) {
  use_nvml_script("lost_gpu.json");
  HealthOptions options;
  options.sysfs_root = fixture("sysfs/down_port");
  options.nvml_library = fake_nvml("current");
  const auto records = node_health_records(collect_node_health(options), origin());
  const auto gpus = of_component(records, "gpu");
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0]["status"], "error");
  EXPECT_NE(gpus[0]["reason"].get<std::string>().find("GPU 0 is lost"), std::string::npos);
  EXPECT_EQ(gpus[1]["status"], "error");
  EXPECT_NE(gpus[1]["reason"].get<std::string>().find("nvmlDeviceGetHandleByIndex_v2(1)"),
            std::string::npos);
  // Both are lost (a query, and the handle itself, answered NVML_ERROR_GPU_IS_LOST): the
  // validator's gpu_lost rule reads `lost`, not the reason.
  EXPECT_EQ(gpus[0].value("lost", false), true);
  EXPECT_EQ(gpus[1].value("lost", false), true);
  EXPECT_EQ(gpus[1]["gpu"]["index"], 1);
  const auto ports = of_component(records, "ib_port");
  ASSERT_EQ(ports.size(), 1u);
  EXPECT_EQ(ports[0]["status"], "ok");  // health measures; the validator judges DOWN
  EXPECT_EQ(ports[0]["state"], "DOWN");
}

#if COMMCERT_TEST_HAVE_HWLOC
TEST(NodeHealth, AffinityPlacesEachNvmlGpu) {
  use_nvml_script("two_h200.json");
  ::setenv("HWLOC_XMLFILE", fixture("hwloc/two_socket_gpu_nic.xml").c_str(), 1);
  HealthOptions options;
  options.sysfs_root = fixture("sysfs/healthy");
  options.nvml_library = fake_nvml("current");
  const auto records = node_health_records(collect_node_health(options), origin());
  ::unsetenv("HWLOC_XMLFILE");
  const Json& affinity = records.back()["affinity"];
  ASSERT_EQ(affinity.size(), 2u);
  EXPECT_EQ(affinity[0]["gpu"], 0);
  EXPECT_EQ(affinity[0]["numa_node"], 0);
  EXPECT_EQ(affinity[0]["nearest_ib_devices"], Json::array({"mlx5_0"}));
  EXPECT_EQ(affinity[1]["pci_bus_id"], "0000:9c:00.0");
  EXPECT_EQ(affinity[1]["numa_node"], 1);
  EXPECT_EQ(affinity[1]["nearest_ib_devices"], Json::array({"mlx5_2"}));
}
#endif

}  // namespace
}  // namespace commcert
