#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "health/gpu_health.hpp"
#include "health/nvml_library.hpp"
#include "health/telemetry.hpp"
#include "health/xid_watcher.hpp"
#include "nvml_fake.hpp"
#include "temp_directory.hpp"

namespace commcert {
namespace {

using testing::fake_nvml;
using testing::use_nvml_script;

bool has_query_error(const GpuHealth& h, const std::string& query, const std::string& text) {
  return std::any_of(h.query_errors.begin(), h.query_errors.end(), [&](const HealthQueryError& e) {
    return e.query == query && e.error.find(text) != std::string::npos;
  });
}

TEST(NvmlLibrary, NoLibraryMeansNoDriverWithTheReasonSpelledOut) {
  const auto opened = NvmlLibrary::open("/nonexistent/libnvidia-ml.so.1");
  EXPECT_EQ(opened.library, nullptr);
  EXPECT_EQ(opened.unavailable_reason.rfind(
                "no NVIDIA driver: /nonexistent/libnvidia-ml.so.1 not found", 0),
            0u)
      << opened.unavailable_reason;
}

TEST(NvmlLibrary, ALibraryWithoutInitIsUnusableNotACrash) {
  const auto opened = NvmlLibrary::open(fake_nvml("broken"));
  EXPECT_EQ(opened.library, nullptr);
  EXPECT_NE(opened.unavailable_reason.find("has no nvmlInit_v2"), std::string::npos)
      << opened.unavailable_reason;
}

TEST(NvmlLibrary, DriverNotLoadedAtInitIsNoDriver) {
  use_nvml_script("driver_not_loaded.json");
  const auto opened = NvmlLibrary::open(fake_nvml("current"));
  EXPECT_EQ(opened.library, nullptr);
  EXPECT_EQ(opened.unavailable_reason,
            "no NVIDIA driver: nvmlInit_v2 returned Driver Not Loaded (NVML error 9)");
}

TEST(NvmlLibrary, ReadsEveryHealthSignalOfAGpu) {
  use_nvml_script("two_h200.json");
  const auto opened = NvmlLibrary::open(fake_nvml("current"));
  ASSERT_NE(opened.library, nullptr) << opened.unavailable_reason;
  const NvmlLibrary& nvml = *opened.library;
  ASSERT_EQ(nvml.device_count().value, 2u);
  const GpuHealth h = probe_gpu_health(nvml, *nvml.device_by_index(0).value, 0);
  EXPECT_EQ(h.name, "NVIDIA H200");
  EXPECT_EQ(h.pci_bus_id, "0000:1b:00.0");  // normalised from NVML's 00000000:1B:00.0
  EXPECT_EQ(h.serial, "1654123456789");
  EXPECT_EQ(h.driver_version, "570.124.06");
  ASSERT_TRUE(h.ecc.has_value());
  EXPECT_TRUE(h.ecc->enabled);
  EXPECT_EQ(h.ecc->aggregate.corrected, 12u);
  ASSERT_TRUE(h.remapped_rows.has_value());
  EXPECT_EQ(h.remapped_rows->correctable, 1u);
  EXPECT_FALSE(h.retired_pages.has_value());  // an H200 remaps rows; it does not retire pages
  ASSERT_TRUE(h.pcie.has_value());
  EXPECT_EQ(h.pcie->gen_max, 5u);
  ASSERT_TRUE(h.nvlink.has_value());
  ASSERT_EQ(h.nvlink->size(), 3u);
  EXPECT_FALSE((*h.nvlink)[2].active);
  EXPECT_EQ((*h.nvlink)[1].replay_errors, 2u);
  EXPECT_EQ((*h.nvlink)[1].crc_flit_errors, 5u);
  EXPECT_DOUBLE_EQ(*h.power_w, 81.25);
  EXPECT_EQ(h.clocks->sm_max, 1980u);
  EXPECT_EQ(*h.clock_event_reasons, std::vector<std::string>{"gpu_idle"});
  EXPECT_EQ(h.persistence_mode, true);
  EXPECT_TRUE(h.query_errors.empty());
  EXPECT_FALSE(h.lost);
}

TEST(NvmlLibrary, KeepsRealErrorsApartFromUnsupportedQueries) {
  use_nvml_script("two_h200.json");
  const auto opened = NvmlLibrary::open(fake_nvml("current"));
  ASSERT_NE(opened.library, nullptr);
  const NvmlLibrary& nvml = *opened.library;
  const GpuHealth h = probe_gpu_health(nvml, *nvml.device_by_index(1).value, 1);
  EXPECT_FALSE(h.serial.has_value());
  EXPECT_TRUE(has_query_error(h, "serial", "Insufficient Permissions"));
  EXPECT_FALSE(h.nvlink.has_value());  // not supported: missing evidence, no error listed
  EXPECT_EQ(h.query_errors.size(), 1u);
  EXPECT_TRUE(h.remapped_rows->pending);
  EXPECT_EQ(h.pcie->gen_current, 4u);
  EXPECT_EQ(h.pcie->width_current, 8u);
  EXPECT_EQ(*h.clock_event_reasons, (std::vector<std::string>{"sw_power_cap", "hw_thermal"}));
}

TEST(NvmlLibrary, OlderDriversWithoutNewerFunctionsStillAnswer) {
  use_nvml_script("two_h200.json");
  const auto opened = NvmlLibrary::open(fake_nvml("legacy"));
  ASSERT_NE(opened.library, nullptr) << opened.unavailable_reason;
  const NvmlLibrary& nvml = *opened.library;
  EXPECT_FALSE(nvml.has_symbol("nvmlDeviceGetRemappedRows"));
  EXPECT_FALSE(nvml.has_symbol("nvmlDeviceGetCurrentClocksEventReasons"));
  const nvml::Device device = *nvml.device_by_index(1).value;
  const auto rows = nvml.remapped_rows(device);
  EXPECT_EQ(rows.code, kNvmlMissingSymbol);
  EXPECT_TRUE(rows.unsupported());
  // The clock-event reasons come from the older name of the same function.
  EXPECT_EQ(nvml.clock_event_reasons(device).value, 68u);
  const GpuHealth h = probe_gpu_health(nvml, device, 1);
  EXPECT_FALSE(h.remapped_rows.has_value());
  EXPECT_FALSE(has_query_error(h, "remapped_rows", ""));
  EXPECT_EQ(nvml.describe(kNvmlMissingSymbol), "function not present in this NVML");
}

// The fake reads COMMCERT_FAKE_NVML_SCRIPT at init: a one-GPU script written for one test.
void use_inline_nvml_script(const test_support::TempDirectory& dir, const Json& device) {
  const auto file = dir.path() / "script.json";
  std::ofstream(file)
      << Json{{"driver_version", "580.65.06"}, {"devices", Json::array({device})}}.dump();
  ::setenv("COMMCERT_FAKE_NVML_SCRIPT", file.c_str(), 1);
}

TEST(NvmlLibrary, ReadsTemperatureThroughTheVersionedCallWhereNvmlHasIt) {
  test_support::TempDirectory dir;
  // The deprecated call fails here: a reading proves the versioned one answered.
  use_inline_nvml_script(dir, {{"pci_bus_id", "00000000:1B:00.0"},
                               {"temperature", 41},
                               {"errors", {{"nvmlDeviceGetTemperature", 999}}}});
  const auto opened = NvmlLibrary::open(fake_nvml("current"));
  ASSERT_NE(opened.library, nullptr) << opened.unavailable_reason;
  const auto device = *opened.library->device_by_index(0).value;
  EXPECT_EQ(opened.library->temperature_c(device).value, 41u);
}

TEST(NvmlLibrary, OlderNvmlReadsTemperatureThroughTheDeprecatedCall) {
  use_nvml_script("two_h200.json");
  const auto opened = NvmlLibrary::open(fake_nvml("legacy"));
  ASSERT_NE(opened.library, nullptr) << opened.unavailable_reason;
  EXPECT_FALSE(opened.library->has_symbol("nvmlDeviceGetTemperatureV"));
  const auto device = *opened.library->device_by_index(0).value;
  EXPECT_EQ(opened.library->temperature_c(device).value, 34u);
}

TEST(NvmlLibrary, ScansNvLinksPastEighteenUpToTheHeadersMaximum) {
  test_support::TempDirectory dir;
  Json links = Json::array();
  for (int link = 0; link < 36; ++link)
    links.push_back(
        {{"active", 1}, {"replay", link}, {"recovery", 0}, {"crc_flit", 0}, {"crc_data", 0}});
  use_inline_nvml_script(dir, {{"pci_bus_id", "00000000:1B:00.0"}, {"nvlink", links}});
  const auto opened = NvmlLibrary::open(fake_nvml("current"));
  ASSERT_NE(opened.library, nullptr) << opened.unavailable_reason;
  const GpuHealth h =
      probe_gpu_health(*opened.library, *opened.library->device_by_index(0).value, 0);
  ASSERT_TRUE(h.nvlink.has_value());
  ASSERT_EQ(h.nvlink->size(), 36u);
  EXPECT_EQ(h.nvlink->back().link, 35u);
  EXPECT_EQ(h.nvlink->back().replay_errors, 35u);
  EXPECT_TRUE(h.query_errors.empty());
}

TEST(NvmlLibrary, GivesEachGpuItsNodeWideIndexByBusId) {
  use_nvml_script("two_h200.json");
  const auto opened = NvmlLibrary::open(fake_nvml("current"));
  ASSERT_NE(opened.library, nullptr) << opened.unavailable_reason;
  const NvmlLibrary& nvml = *opened.library;
  EXPECT_EQ(nvml.index(*nvml.device_by_pci_bus_id("0000:9c:00.0").value).value, 1u);
  EXPECT_EQ(nvml.index(*nvml.device_by_pci_bus_id("0000:1b:00.0").value).value, 0u);
}

TEST(NvmlLibrary, ALostGpuIsFlagged) {
  use_nvml_script("lost_gpu.json");
  const auto opened = NvmlLibrary::open(fake_nvml("current"));
  ASSERT_NE(opened.library, nullptr);
  const NvmlLibrary& nvml = *opened.library;
  const GpuHealth h = probe_gpu_health(nvml, *nvml.device_by_index(0).value, 0);
  EXPECT_TRUE(h.lost);
  EXPECT_TRUE(has_query_error(h, "temperature_c", "GPU is lost"));
  const auto unreachable = nvml.device_by_index(1);
  EXPECT_FALSE(unreachable.ok());
  EXPECT_TRUE(unreachable.gpu_lost());
}

TEST(XidWatcher, CollectsXidsOfRegisteredGpusOnly) {
  use_nvml_script("two_h200.json");
  const auto opened = NvmlLibrary::open(fake_nvml("current"));
  ASSERT_NE(opened.library, nullptr);
  const NvmlLibrary& nvml = *opened.library;
  XidWatcher watcher(nvml, {*nvml.device_by_index(0).value, *nvml.device_by_index(1).value});
  watcher.poll(0);
  ASSERT_TRUE(watcher.events(0).has_value());
  ASSERT_EQ(watcher.events(0)->size(), 1u);
  EXPECT_EQ(watcher.events(0)->front().xid, 79u);
  EXPECT_EQ(watcher.events(0)->front().time.size(), 24u);  // 2026-11-22T00:00:00.000Z
  EXPECT_TRUE(watcher.events(1)->empty());
}

TEST(TelemetrySampler, SamplesClocksPowerThrottlingAndXidsWhileRunning) {
  use_nvml_script("burn_sampling.json");
  const auto opened = NvmlLibrary::open(fake_nvml("current"));
  ASSERT_NE(opened.library, nullptr);
  const NvmlLibrary& nvml = *opened.library;
  TelemetrySampler sampler(nvml, {*nvml.device_by_pci_bus_id("0000:1b:00.0").value}, 0.02);
  sampler.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  sampler.stop();
  const TelemetrySeries series = sampler.series(0);
  ASSERT_GE(series.samples.size(), 6u);
  const Json t = telemetry_json(series);
  EXPECT_EQ(t["sm_clock_mhz"]["max"], 1980);
  EXPECT_EQ(t["sm_clock_mhz"]["min"], 1740);
  EXPECT_DOUBLE_EQ(t["power_w"]["max"].get<double>(), 701);
  EXPECT_DOUBLE_EQ(t["power_limit_w"].get<double>(), 700);
  EXPECT_EQ(t["temperature_c"]["max"], 74);
  EXPECT_EQ(t["ecc_delta"]["corrected"], 0);
  ASSERT_EQ(t["xid_events"].size(), 1u);
  EXPECT_EQ(t["xid_events"][0]["xid"], 94);
  bool power_cap = false;
  for (const auto& entry : t["throttle"])
    power_cap = power_cap || entry["reason"] == "sw_power_cap";
  EXPECT_TRUE(power_cap) << t.dump();
}

}  // namespace
}  // namespace commcert
