// What the GPU stages make of their engines' outcomes (gpu_stage_records.hpp): the records each
// process writes, with the rank and GPU of the slot that measured, and the fingerprints burn's
// GPUs exchange to compare their results with their peers'.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/gpu_stage_records.hpp"
#include "cli/p2p_command.hpp"

namespace commcert {
namespace {

constexpr int kFirstRank = 2;

// This process's ranks start at 2 on nodeA: slot i is rank 2 + i.
RecordOrigin origin_of(std::size_t slot) {
  RecordOrigin origin;
  origin.run_id = "run";
  origin.host = "nodeA";
  origin.rank = kFirstRank + static_cast<int>(slot);
  origin.local_rank = static_cast<int>(slot);
  return origin;
}

GpuIdentity gpu(int index) {
  GpuIdentity identity;
  identity.index = index;
  identity.name = "Test GPU";
  identity.pci_bus_id = "0000:0" + std::to_string(index) + ":00.0";
  return identity;
}

GpuSlots slots_for(int gpus) {
  GpuSlots plan;
  for (int i = 0; i < gpus; ++i) {
    GpuDescription description;
    description.identity = gpu(i);
    plan.gpus.push_back(description);
    plan.slots.emplace_back();
  }
  return plan;
}

BurnOutcome burned(int index, std::uint64_t fingerprint) {
  BurnOutcome outcome;
  outcome.gpu = gpu(index);
  outcome.model = "Test GPU (132 SMs)";
  outcome.measured = true;
  outcome.fingerprint = fingerprint;
  outcome.duration_s = 10;
  outcome.iterations = 100;
  outcome.window_tflops = {500, 510};
  outcome.checked_results = 10;
  return outcome;
}

TEST(BurnFingerprints, OnlyAGpuThatMeasuredWithoutErrorOffersItsFingerprint) {
  BurnOutcome failed = burned(1, 22);
  failed.status = RecordStatus::kError;
  // Three slots, two outcomes: the third slot still has its entry, so entry i stays rank i.
  const Json entries = burn_fingerprint_entries("nodeA", 3, {burned(0, 11), failed});
  ASSERT_EQ(entries.size(), 3U);
  EXPECT_EQ(entries[0]["fingerprint"], 11);
  EXPECT_EQ(entries[0]["node"], "nodeA");
  EXPECT_EQ(entries[0]["model"], "Test GPU (132 SMs)");
  EXPECT_TRUE(entries[1]["fingerprint"].is_null());
  EXPECT_TRUE(entries[2]["fingerprint"].is_null());
  EXPECT_EQ(entries[2]["model"], "");
}

TEST(BurnFingerprints, EveryProcesssEntriesComeBackInRankOrder) {
  const std::vector<std::string> gathered{
      burn_fingerprint_entries("nodeA", 2, {burned(0, 11), burned(1, 11)}).dump(),
      burn_fingerprint_entries("nodeB", 1, {burned(0, 33)}).dump()};
  const std::vector<PeerResult> everyone = burn_peer_results(gathered);
  ASSERT_EQ(everyone.size(), 3U);
  EXPECT_EQ(everyone[0].node, "nodeA");
  EXPECT_EQ(everyone[1].fingerprint, 11U);
  EXPECT_EQ(everyone[2].node, "nodeB");
  EXPECT_EQ(everyone[2].fingerprint, 33U);
}

TEST(BurnRecords, EachGpuIsJudgedWithTheVerdictOfItsOwnRank) {
  // Ranks 0 and 1 are another process's; this process's GPUs are ranks 2 and 3, and rank 3's
  // result differs from its peers'.
  std::vector<PeerVerdict> verdicts(4, PeerVerdict{false, 1});
  verdicts[3].mismatch = true;
  const std::vector<Json> records =
      burn_records(BurnSettings{}, slots_for(2), {burned(0, 11), burned(1, 99)}, verdicts,
                   kFirstRank, "nodeA", origin_of);
  ASSERT_EQ(records.size(), 2U);
  EXPECT_EQ(records[0]["rank"], 2);
  EXPECT_EQ(records[0]["gpu"]["index"], 0);
  EXPECT_EQ(records[0]["status"], "ok");
  EXPECT_EQ(records[0]["kernel"], "gemm_bf16");
  EXPECT_TRUE(records[0].contains("tflops"));
  EXPECT_EQ(records[1]["rank"], 3);
  EXPECT_EQ(records[1]["gpu"]["index"], 1);
  EXPECT_EQ(records[1]["status"], "fail");
  EXPECT_FALSE(records[1]["reason"].get<std::string>().empty());
}

TEST(BurnRecords, AGpuThatNeverRanHasItsReasonAndNoMeasurement) {
  BurnOutcome failed;
  failed.gpu = gpu(0);
  failed.status = RecordStatus::kError;
  failed.reason = "GPU 0: out of memory";
  const std::vector<Json> records =
      burn_records(BurnSettings{}, slots_for(1), {failed}, std::vector<PeerVerdict>(3), kFirstRank,
                   "nodeA", origin_of);
  ASSERT_EQ(records.size(), 1U);
  EXPECT_EQ(records[0]["status"], "error");
  EXPECT_EQ(records[0]["reason"], "GPU 0: out of memory");
  EXPECT_FALSE(records[0].contains("tflops"));
}

TEST(BurnRecords, AProcessWithoutGpusWritesOneRecordSayingWhy) {
  GpuSlots plan;
  plan.slots.emplace_back();
  plan.unavailable_status = RecordStatus::kSkipped;
  plan.unavailable_reason = "no NVIDIA driver";
  const std::vector<Json> records = burn_records(
      BurnSettings{}, plan, {}, std::vector<PeerVerdict>(3), kFirstRank, "nodeA", origin_of);
  ASSERT_EQ(records.size(), 1U);
  EXPECT_EQ(records[0]["rank"], 2);
  EXPECT_EQ(records[0]["status"], "skipped");
  EXPECT_EQ(records[0]["reason"], "no NVIDIA driver");
  EXPECT_EQ(records[0]["kernel"], "gemm_bf16");
}

TEST(MembwRecords, AFailedHostTransferMakesAnOkGpuAnErrorAndLeavesAnEarlierErrorAlone) {
  std::vector<MembwOutcome> outcomes(3);
  for (int i = 0; i < 3; ++i)
    outcomes[static_cast<std::size_t>(i)].gpu = gpu(i);
  outcomes[2].status = RecordStatus::kTimeout;
  outcomes[2].reason = "GPU 2: copy kernel timed out";
  HostTransfer measured;
  measured.h2d_bytes_per_s = 55e9;
  add_host_transfers(outcomes, {measured, std::nullopt, std::nullopt},
                     {"", "GPU 1: host transfer: pinned allocation failed", "GPU 2: also"});

  const std::vector<Json> records = membw_records(slots_for(3), outcomes, origin_of);
  ASSERT_EQ(records.size(), 3U);
  EXPECT_EQ(records[0]["status"], "ok");
  EXPECT_EQ(records[0]["host_transfer"]["h2d_bytes_per_s"], 55e9);
  EXPECT_EQ(records[1]["rank"], 3);
  EXPECT_EQ(records[1]["status"], "error");
  EXPECT_EQ(records[1]["reason"], "GPU 1: host transfer: pinned allocation failed");
  EXPECT_EQ(records[2]["gpu"]["index"], 2);
  EXPECT_EQ(records[2]["status"], "timeout");
  EXPECT_EQ(records[2]["reason"], "GPU 2: copy kernel timed out");
}

TEST(MembwRecords, AProcessWithoutGpusWritesOneRecordSayingWhy) {
  GpuSlots plan;
  plan.slots.emplace_back();
  plan.unavailable_status = RecordStatus::kError;
  plan.unavailable_reason = "-g 4: only 2 GPUs visible";
  const std::vector<Json> records = membw_records(plan, {}, origin_of);
  ASSERT_EQ(records.size(), 1U);
  EXPECT_EQ(records[0]["status"], "error");
  EXPECT_EQ(records[0]["reason"], "-g 4: only 2 GPUs visible");
}

TEST(P2pRecords, EveryStreamOfEveryTestIsOneRecordFromTheRankOfTheGpuThatDroveIt) {
  const std::vector<std::vector<bool>> access{{true, true}, {true, true}};
  HostNuma numa;
  numa.gpu_node = {0, 0};
  numa.online_nodes = {0};
  const P2pSettings settings;
  const std::vector<P2pTest> tests = plan_p2p_tests(2, access, numa, settings.selection);
  P2pRun run;
  std::size_t expected = 0;
  for (const P2pTest& test : tests) {
    P2pTestResult result;
    if (test.skip_reason) {
      result.status = RecordStatus::kSkipped;
      result.reason = *test.skip_reason;
    } else {
      result.samples_s.assign(test.streams.size(), std::vector<double>{0.01, 0.011, 0.012});
    }
    run.results.push_back(result);
    expected += std::max<std::size_t>(test.streams.size(), 1);
  }
  run.results.back().status = RecordStatus::kTimeout;
  run.results.back().reason = "copy timed out";

  const std::vector<Json> records = p2p_records(settings, tests, run, {gpu(0), gpu(1)}, origin_of);
  ASSERT_EQ(records.size(), expected);
  std::size_t next = 0;
  for (std::size_t t = 0; t < tests.size(); ++t) {
    for (std::size_t s = 0; s < std::max<std::size_t>(tests[t].streams.size(), 1); ++s) {
      const Json& record = records[next++];
      const int device = s < tests[t].streams.size() ? tests[t].streams[s].device : 0;
      EXPECT_EQ(record["rank"], kFirstRank + device) << "test " << t << " stream " << s;
      EXPECT_EQ(record["status"], to_string(run.results[t].status)) << "test " << t;
    }
  }
  EXPECT_EQ(records.back()["reason"], "copy timed out");
}

TEST(P2pRole, WithMinusG0TheHostsFirstProcessDrivesEveryGpuAndTheOthersStandBy) {
  const P2pRole first = p2p_role(0, 4, 0);
  EXPECT_TRUE(first.one_for_the_node);
  EXPECT_FALSE(first.bystander);
  for (int local = 1; local < 4; ++local) {
    const P2pRole other = p2p_role(0, 4, local);
    EXPECT_TRUE(other.one_for_the_node);
    EXPECT_TRUE(other.bystander) << local;
  }
  // Alone on its host, or with GPUs of its own (-g 1): a process measures what it has.
  for (const P2pRole role : {p2p_role(0, 1, 0), p2p_role(1, 4, 2)}) {
    EXPECT_FALSE(role.one_for_the_node);
    EXPECT_FALSE(role.bystander);
  }
}

}  // namespace
}  // namespace commcert
