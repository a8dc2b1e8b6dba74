// Reading `dcgmi diag -j` output (tests/fixtures/dcgm, written from DCGM's published layout) and
// the health records it becomes: every DCGM status, both top-level keys, and the fail-closed
// mapping (docs/ingest.md "DCGM diagnostics").
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "ingest/dcgm_diag.hpp"

namespace commcert {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(COMMCERT_SOURCE_DIR) + "/tests/fixtures/dcgm/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

DcgmRecords records_of(const std::string& name) {
  const DcgmDiag diag = parse_dcgm_diag(fixture(name));
  EXPECT_FALSE(diag.error) << name << ": " << diag.error.value_or("");
  return dcgm_diag_records(diag, {"run-1", "gpu-node-07"});
}

const Json& gpu_record(const DcgmRecords& records, int index) {
  for (const auto& r : records.records) {
    if (r["gpu"]["index"] == index) return r;
  }
  ADD_FAILURE() << "no record for gpu " << index;
  return records.records.front();
}

TEST(DcgmDiag, AllPassMakesOneOkHealthRecordPerGpuOnTheGivenNode) {
  const DcgmRecords out = records_of("diag_r3_all_pass.json");
  ASSERT_EQ(out.records.size(), 2u);
  for (int gpu : {0, 1}) {
    const Json& r = gpu_record(out, gpu);
    EXPECT_EQ(r["kind"], "health");
    EXPECT_EQ(r["component"], "gpu");
    EXPECT_EQ(r["status"], "ok");
    EXPECT_EQ(r["host"], "gpu-node-07");
    EXPECT_EQ(r["source"], "dcgm");
    EXPECT_EQ(r["driver_version"], "535.161.08");
    // What DCGM does not report is null, never made up.
    EXPECT_TRUE(r["ecc"].is_null());
    EXPECT_TRUE(r["temperature_c"].is_null());
  }
  EXPECT_TRUE(out.not_judged.empty());
  // Deployment tests name every GPU in one entry; both GPUs rest on them.
  EXPECT_EQ(out.gpus["0"]["Denylist"], "Pass");
  EXPECT_EQ(out.gpus["1"]["Denylist"], "Pass");
  EXPECT_EQ(out.gpus["1"]["Memory Bandwidth"], "Pass");
}

TEST(DcgmDiag, OneGpuFailingMemoryFailsThatGpuOnlyWithDcgmsMessage) {
  const DcgmRecords out = records_of("diag_r3_gpu1_memory_fail.json");
  ASSERT_EQ(out.records.size(), 2u);
  EXPECT_EQ(gpu_record(out, 0)["status"], "ok");
  const Json& failed = gpu_record(out, 1);
  EXPECT_EQ(failed["status"], "fail");
  const std::string reason = failed["reason"];
  EXPECT_NE(reason.find("DCGM Memory failed (Fail)"), std::string::npos) << reason;
  EXPECT_NE(reason.find("A memory mismatch was detected on GPU 1"), std::string::npos) << reason;
  EXPECT_NE(reason.find("Allocated 83852918784 bytes"), std::string::npos) << reason;
  EXPECT_EQ(failed["driver_version"], "570.124.06");
}

TEST(DcgmDiag, SkipAndWarnAreNotAPass) {
  const DcgmRecords out = records_of("diag_r3_skip_warn.json");
  const Json& skipped = gpu_record(out, 0);
  EXPECT_EQ(skipped["status"], "skipped");
  EXPECT_NE(skipped["reason"].get<std::string>().find("Targeted Power skipped"), std::string::npos);
  const Json& warned = gpu_record(out, 1);
  EXPECT_EQ(warned["status"], "error");
  EXPECT_NE(warned["reason"].get<std::string>().find("Memory Bandwidth warned (Warn): GPU 1 "),
            std::string::npos)
      << warned["reason"];
}

TEST(DcgmDiag, OlderUppercaseStatusesAndInfoArraysAreRead) {
  const DcgmDiag diag = parse_dcgm_diag(fixture("diag_old_uppercase.json"));
  ASSERT_FALSE(diag.error);
  ASSERT_FALSE(diag.results.empty());
  for (const auto& r : diag.results)
    EXPECT_EQ(r.outcome, DcgmOutcome::kPass) << r.element << " " << r.status;
  const DcgmRecords out = dcgm_diag_records(diag, {"run-1", "n1"});
  EXPECT_EQ(gpu_record(out, 0)["status"], "ok");
  EXPECT_EQ(gpu_record(out, 1)["status"], "ok");
}

TEST(DcgmDiag, NewerTopLevelKeyAndATestWithoutACheckIsReportedNotJudged) {
  const DcgmDiag diag = parse_dcgm_diag(fixture("diag_new_key_unjudged_test.json"));
  ASSERT_FALSE(diag.error);
  EXPECT_EQ(diag.dcgm_version, "4.2.3");
  const DcgmRecords out = dcgm_diag_records(diag, {"run-1", "n1"});
  EXPECT_EQ(out.records.size(), 2u);
  ASSERT_EQ(out.not_judged.size(), 1u);
  EXPECT_NE(out.not_judged[0].find("'NVBandwidth'"), std::string::npos) << out.not_judged[0];
  EXPECT_FALSE(out.gpus["0"].contains("NVBandwidth"));
}

TEST(DcgmDiag, AnUnknownStatusFailsClosedAsInconclusive) {
  const DcgmDiag diag = parse_dcgm_diag(R"({"DCGM Diagnostic": {"test_categories": [
      {"category": "Hardware", "tests": [{"name": "Memory", "results": [
        {"gpu_ids": "3", "status": "Pass"}]}, {"name": "Diagnostic", "results": [
        {"gpu_ids": "3", "status": "Not Run"}]}]}]}})");
  ASSERT_FALSE(diag.error);
  const DcgmRecords out = dcgm_diag_records(diag, {"run-1", "n1"});
  ASSERT_EQ(out.records.size(), 1u);
  EXPECT_EQ(out.records[0]["gpu"]["index"], 3);
  EXPECT_EQ(out.records[0]["status"], "error");
  EXPECT_NE(out.records[0]["reason"].get<std::string>().find("Diagnostic unknown status (Not Run)"),
            std::string::npos);
}

TEST(DcgmDiag, AFailBeatsWarnAndSkipOnTheSameGpu) {
  const DcgmDiag diag = parse_dcgm_diag(R"({"DCGM Diagnostic": {"test_categories": [
      {"category": "Stress", "tests": [
        {"name": "Targeted Stress", "results": [{"gpu_ids": "0", "status": "skip"}]},
        {"name": "Targeted Power", "results": [{"gpu_ids": "0", "status": "warn"}]},
        {"name": "PCIe", "results": [{"gpu_ids": "0", "status": "fail",
                                      "warnings": "PCIe replay rate too high"}]}]}]}})");
  const DcgmRecords out = dcgm_diag_records(diag, {"run-1", "n1"});
  ASSERT_EQ(out.records.size(), 1u);
  EXPECT_EQ(out.records[0]["status"], "fail");
  EXPECT_EQ(out.records[0]["reason"], "DCGM PCIe failed (fail): PCIe replay rate too high");
}

TEST(DcgmDiag, AResultNamingNoGpuIsNotJudgedAndMakesNoRecord) {
  const DcgmDiag diag = parse_dcgm_diag(R"({"DCGM Diagnostic": {"test_categories": [
      {"category": "Hardware", "tests": [{"name": "Memory", "results": [
        {"status": "Fail", "warnings": [{"message": "no GPU named"}]}]}]}]}})");
  const DcgmRecords out = dcgm_diag_records(diag, {"run-1", "n1"});
  EXPECT_TRUE(out.records.empty());
  ASSERT_EQ(out.not_judged.size(), 1u);
  EXPECT_NE(out.not_judged[0].find("names no GPU"), std::string::npos);
}

TEST(DcgmDiag, MalformedElementsAreNamedNotGuessed) {
  const DcgmDiag diag = parse_dcgm_diag(R"({"DCGM Diagnostic": {"test_categories": [
      {"category": "Hardware", "tests": [{"name": "Memory", "results": [
        {"gpu_ids": "0,x", "status": "Pass"}, {"gpu_ids": "1"},
        {"gpu_ids": "2", "status": "Pass"}]}, {"results": []}]}, 7]}})");
  ASSERT_FALSE(diag.error);
  ASSERT_EQ(diag.results.size(), 1u);
  EXPECT_EQ(diag.results[0].gpus, std::vector<int>{2});
  ASSERT_EQ(diag.unreadable.size(), 4u);
  EXPECT_EQ(diag.unreadable[0],
            "test_categories[0].tests[0].results[0]: 'gpu_ids' is not a list of GPU ids");
  EXPECT_EQ(diag.unreadable[1], "test_categories[0].tests[0].results[1]: no 'status'");
  EXPECT_EQ(diag.unreadable[2], "test_categories[0].tests[1]: no 'name' or no 'results' array");
  EXPECT_EQ(diag.unreadable[3], "test_categories[1]: no 'tests' array");
}

TEST(DcgmDiag, ACutOffFileIsOneErrorWithItsLineAndColumn) {
  const std::string text = fixture("diag_truncated.json");
  const DcgmDiag diag = parse_dcgm_diag(text);
  ASSERT_TRUE(diag.error);
  EXPECT_NE(diag.error->find("not whole JSON"), std::string::npos);
  // The parser gives up at the end of the text: the last line.
  std::size_t lines = 1;
  for (const char c : text)
    lines += c == '\n';
  EXPECT_EQ(diag.error_line, lines);
  EXPECT_TRUE(diag.results.empty());
}

TEST(DcgmDiag, GarbageNamesTheLineItBreaksOn) {
  const DcgmDiag diag = parse_dcgm_diag(fixture("diag_garbage.json"));
  ASSERT_TRUE(diag.error);
  EXPECT_EQ(diag.error_line, 5u);
  EXPECT_EQ(diag.error_column, 5u);
}

// A number beyond a double is an error of the file, as a parse error is (the fuzzer found it
// escaping as nlohmann's out_of_range).
TEST(DcgmDiag, ANumberBeyondADoubleIsAnErrorOfTheFile) {
  const DcgmDiag diag = parse_dcgm_diag("{\"DCGM GPU Diagnostic\": {\"version\": 1e99999}}");
  ASSERT_TRUE(diag.error);
  EXPECT_NE(diag.error->find("not readable JSON"), std::string::npos) << *diag.error;
  EXPECT_NE(diag.error->find("1e99999"), std::string::npos) << *diag.error;
  EXPECT_TRUE(diag.results.empty());
}

TEST(DcgmDiag, IsToldApartFromNcclTestsJson) {
  EXPECT_TRUE(looks_like_dcgm_diag(fixture("diag_r3_all_pass.json")));
  EXPECT_TRUE(looks_like_dcgm_diag(fixture("diag_new_key_unjudged_test.json")));
  EXPECT_TRUE(looks_like_dcgm_diag(fixture("diag_truncated.json")));
  EXPECT_FALSE(looks_like_dcgm_diag(R"({"args": ["all_reduce_perf"], "config": {}})"));
  EXPECT_FALSE(looks_like_dcgm_diag("# nccl-tests version 2.17.4\n\"DCGM Diagnostic\""));
  const DcgmDiag other = parse_dcgm_diag(R"({"args": []})");
  ASSERT_TRUE(other.error);
  EXPECT_EQ(other.error_line, 0u);
}

TEST(DcgmDiag, MapsHardwareAndDeploymentTestsToHealthGpuOnly) {
  DcgmResult r;
  r.category = "Stress";
  for (const char* test : {"Memory", "Diagnostic", "PCIe", "Targeted Stress", "targeted_power",
                           "Memory Bandwidth", "SM Stress", "Software"}) {
    r.test = test;
    EXPECT_EQ(dcgm_check_of(r), "health.gpu") << test;
  }
  r.test = "NVBandwidth";
  EXPECT_EQ(dcgm_check_of(r), std::nullopt);
  r.category = "Deployment";
  r.test = "Some Future Deployment Check";
  EXPECT_EQ(dcgm_check_of(r), "health.gpu");
}

// A diagnostic made of these tests (category, name), each naming GPU 0.
DcgmDiag diag_of(const std::vector<std::pair<std::string, std::string>>& tests) {
  DcgmDiag diag;
  for (const auto& [category, test] : tests) {
    DcgmResult r;
    r.category = category;
    r.test = test;
    r.gpus = {0};
    r.status = "Pass";
    r.outcome = DcgmOutcome::kPass;
    diag.results.push_back(r);
  }
  return diag;
}

// The level is the highest one every test of which is present (DCGM's run-level table): each
// level with one of its tests missing is the level below, whatever else ran.
TEST(DcgmDiag, TheRunLevelIsTheHighestLevelAllOfWhoseTestsRan) {
  const std::vector<std::pair<std::string, std::string>> level1 = {{"Deployment", "Denylist"}};
  const auto with = [&](std::vector<std::pair<std::string, std::string>> more) {
    auto tests = level1;
    tests.insert(tests.end(), more.begin(), more.end());
    return diag_of(tests);
  };
  EXPECT_EQ(dcgm_run_level(diag_of({{"Hardware", "Memory"}, {"Integration", "PCIe"}})), 0);
  EXPECT_EQ(dcgm_run_level(diag_of({{"Custom", "Software"}})), 1);
  EXPECT_EQ(dcgm_run_level(with({})), 1);
  EXPECT_EQ(dcgm_run_level(with({{"Hardware", "Memory"}})), 1);
  EXPECT_EQ(dcgm_run_level(with({{"Hardware", "Memory"}, {"Integration", "PCIe"}})), 2);
  const std::vector<std::pair<std::string, std::string>> level3 = {
      {"Hardware", "Memory"},        {"Integration", "PCIe"},      {"Hardware", "Diagnostic"},
      {"Stress", "Targeted Stress"}, {"Stress", "Targeted Power"}, {"Stress", "Memory Bandwidth"}};
  for (std::size_t left_out = 2; left_out < level3.size(); ++left_out) {
    auto tests = level3;
    tests.erase(tests.begin() + static_cast<std::ptrdiff_t>(left_out));
    EXPECT_EQ(dcgm_run_level(with(tests)), 2) << level3[left_out].second;
  }
  EXPECT_EQ(dcgm_run_level(with(level3)), 3);
  auto level4 = level3;
  level4.emplace_back("Hardware", "Memtest");
  EXPECT_EQ(dcgm_run_level(with(level4)), 3);
  level4.emplace_back("Stress", "pulse_test");
  EXPECT_EQ(dcgm_run_level(with(level4)), 4);
}

// Every record of a diagnostic says its level; the published r3 layouts are level 3.
TEST(DcgmDiag, RecordsCarryTheDiagnosticsLevel) {
  for (const char* name : {"diag_r3_all_pass.json", "diag_old_uppercase.json"}) {
    const DcgmRecords out = records_of(name);
    EXPECT_EQ(out.level, 3) << name;
    for (const auto& r : out.records)
      EXPECT_EQ(r["dcgm_level"], 3) << name;
  }
  EXPECT_EQ(records_of("diag_new_key_unjudged_test.json").level, 1);
}

}  // namespace
}  // namespace commcert
