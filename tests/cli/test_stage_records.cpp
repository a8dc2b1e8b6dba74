#include <gtest/gtest.h>

#include "bench/burn.hpp"
#include "bench/membw.hpp"
#include "cli/stage_session.hpp"
#include "core/errors.hpp"

namespace commcert {
namespace {

BurnOutcome measured_outcome() {
  BurnOutcome o;
  o.gpu.index = 2;
  o.gpu.pci_bus_id = "0000:3b:00.0";
  o.measured = true;
  o.duration_s = 60.4;
  o.iterations = 4200;
  o.window_tflops = {700, 720, 710};
  o.checked_results = 61;
  return o;
}

// A measured GPU's record, as burn_command.cpp puts it together.
Json burn_json(const BurnSettings& settings, const BurnOutcome& outcome, const PeerVerdict& peers,
               std::optional<double> peak_tflops) {
  BurnRecord record;
  record.kernel = burn_kernel_name(settings.kernel);
  record.measurement = burn_measurement(settings, outcome, peers, peak_tflops);
  return to_json(record);
}

// A measured GPU's record, as membw_command.cpp puts it together.
Json membw_json(const MembwOutcome& outcome, std::optional<double> peak_bytes_per_s) {
  MembwRecord record;
  record.measurement = membw_measurement(outcome, peak_bytes_per_s);
  return to_json(record);
}

TEST(BurnKernels, ParseTheRecordIdsAndNameTheFlagOnError) {
  EXPECT_EQ(parse_burn_kernel("gemm_fp8", "--kernel"), BurnKernel::kGemmFp8);
  EXPECT_EQ(burn_kernel_name(BurnKernel::kPowerFma), "power_fma");
  EXPECT_EQ(burn_matrix_dtype(BurnKernel::kGemmFp8), "fp8_e4m3");
  EXPECT_EQ(burn_min_compute_capability(BurnKernel::kGemmFp8), 89);
  try {
    (void)parse_burn_kernel("gemm_int4", "--kernel");
    FAIL() << "accepted an unknown kernel";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("--kernel 'gemm_int4'"), std::string::npos);
  }
}

TEST(BurnRecord, ReportsTheMedianWindowAndEveryContractField) {
  BurnSettings s;
  s.duration_s = 60;
  const Json r = burn_json(s, measured_outcome(), PeerVerdict{false, 7}, 989.0);
  EXPECT_EQ(r["kernel"], "gemm_bf16");
  EXPECT_EQ(r["matrix"]["m"], 8192);
  EXPECT_EQ(r["matrix"]["dtype"], "bf16");
  EXPECT_DOUBLE_EQ(r["tflops"].get<double>(), 710);
  EXPECT_EQ(r["tflops_windows"]["count"], 3);
  EXPECT_EQ(r["iterations"], 4200);
  EXPECT_EQ(r["miscompares"], 0);
  EXPECT_EQ(r["peer_mismatch"], false);
  EXPECT_EQ(r["peer_gpus"], 7);
  EXPECT_TRUE(r["telemetry"].is_null());
  EXPECT_DOUBLE_EQ(r["datasheet_peak_tflops"].get<double>(), 989);
}

TEST(BurnRecord, MissingEvidenceIsNullNeverZero) {
  BurnSettings s;
  s.kernel = BurnKernel::kPowerFma;
  BurnOutcome o;
  const Json r = burn_json(s, o, PeerVerdict{}, std::nullopt);
  EXPECT_TRUE(r["matrix"].is_null());
  EXPECT_TRUE(r["tflops"].is_null());
  EXPECT_TRUE(r["tflops_windows"].is_null());
  EXPECT_TRUE(r["peer_mismatch"].is_null());
  EXPECT_TRUE(r["datasheet_peak_tflops"].is_null());
}

TEST(BurnRecord, FailsOnMiscomparesOrAPeerMismatchAndSaysWhich) {
  BurnOutcome o = measured_outcome();
  EXPECT_EQ(burn_status(o, PeerVerdict{false, 3}), RecordStatus::kOk);
  o.miscompares = 12;
  EXPECT_EQ(burn_status(o, PeerVerdict{false, 3}), RecordStatus::kFail);
  EXPECT_NE(burn_reason(o, PeerVerdict{false, 3}, "node7").find("12 result element(s)"),
            std::string::npos);
  o.miscompares = 0;
  EXPECT_EQ(burn_status(o, PeerVerdict{true, 3}), RecordStatus::kFail);
  const std::string reason = burn_reason(o, PeerVerdict{true, 3}, "node7");
  EXPECT_NE(reason.find("GPU 2 (0000:3b:00.0)"), std::string::npos) << reason;
  EXPECT_NE(reason.find("node7"), std::string::npos) << reason;
  o.status = RecordStatus::kTimeout;
  o.reason = "GPU 2: burn window 3 did not complete within the timeout";
  EXPECT_EQ(burn_status(o, PeerVerdict{true, 3}), RecordStatus::kTimeout);
  EXPECT_EQ(burn_reason(o, PeerVerdict{true, 3}, "node7"), o.reason);
}

TEST(MembwRecord, ComparesTheCopyKernelWithCudaMemcpyAndTheBestKernelWithThePeak) {
  MembwOutcome o;
  o.read_bytes_per_s = 4.2e12;
  o.write_bytes_per_s = 4.0e12;
  o.copy_bytes_per_s = 4.1e12;
  o.memcpy_d2d_bytes_per_s = 4.0e12;
  const Json r = membw_json(o, 4.8e12);
  EXPECT_DOUBLE_EQ(r["fraction_of_peak"].get<double>(), 4.2 / 4.8);
  EXPECT_DOUBLE_EQ(r["fraction_of_memcpy"].get<double>(), 4.1 / 4.0);
  EXPECT_DOUBLE_EQ(r["bandwidth"]["datasheet_peak_bytes_per_s"].get<double>(), 4.8e12);
  const Json unknown = membw_json(o, std::nullopt);
  EXPECT_TRUE(unknown["fraction_of_peak"].is_null());
  EXPECT_TRUE(unknown["bandwidth"]["datasheet_peak_bytes_per_s"].is_null());
  EXPECT_TRUE(unknown["host_transfer"].is_null());
  EXPECT_TRUE(unknown["integrity"].is_null());
  EXPECT_TRUE(membw_json(MembwOutcome{}, 4.8e12)["bandwidth"].is_null());
}

TEST(MembwRecord, FailsWhenThePatternTestFindsErrorsAndLocatesTheFirst) {
  MembwOutcome o;
  o.gpu.index = 1;
  o.integrity = MemoryIntegrity{1ull << 30, {"walking_ones"}, 3, {{0x1000, 1, 3, "walking_ones"}}};
  EXPECT_EQ(membw_status(o), RecordStatus::kFail);
  const std::string reason = membw_reason(o);
  EXPECT_NE(reason.find("3 memory word(s)"), std::string::npos) << reason;
  EXPECT_NE(reason.find("0x1000"), std::string::npos) << reason;
  const Json r = membw_json(o, std::nullopt);
  EXPECT_EQ(r["integrity"]["errors"], 3);
  EXPECT_EQ(r["integrity"]["first_errors"][0]["offset"], 0x1000);
  o.integrity->errors = 0;
  o.integrity->first_errors.clear();
  EXPECT_EQ(membw_status(o), RecordStatus::kOk);
}

TEST(StageExitCode, TimeoutOverErrorOverFailAndSkippedIsNotAFailure) {
  const auto with = [](std::initializer_list<const char*> statuses) {
    std::vector<Json> records;
    for (const char* status : statuses)
      records.push_back({{"status", status}});
    return exit_code_for(records);
  };
  EXPECT_EQ(with({"ok", "skipped"}), 0);
  EXPECT_EQ(with({"ok", "fail"}), 1);
  EXPECT_EQ(with({"fail", "error"}), 3);
  EXPECT_EQ(with({"error", "timeout", "fail"}), 4);
  EXPECT_EQ(with({}), 0);
}

}  // namespace
}  // namespace commcert
