// Write-then-read, per record kind: what today's writer functions write must be valid against
// docs/schema/record.schema.json and must reach the validator's evidence with its values intact.
#include <fstream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "health/telemetry.hpp"
#include "json_schema_subset.hpp"
#include "record_samples.hpp"
#include "records/burn.hpp"
#include "records/collective.hpp"
#include "records/health.hpp"
#include "records/link.hpp"
#include "records/membw.hpp"
#include "records/stage.hpp"
#include "temp_directory.hpp"
#include "validate/record_reader.hpp"

namespace commcert {
namespace {

using test_support::record_samples;
using test_support::RecordSample;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const std::vector<RecordSample>& samples() {
  static const std::vector<RecordSample> all = record_samples("roundtrip-1");
  return all;
}

std::vector<Json> of_kind(const std::string& kind, const std::string& status = "") {
  std::vector<Json> out;
  for (const auto& sample : samples()) {
    if (sample.record.at("kind") == kind &&
        (status.empty() || sample.record.at("status") == status))
      out.push_back(sample.record);
  }
  return out;
}

// The records written to one records.jsonl, read back as `commcert certify` reads it.
struct ReadBack {
  test_support::TempDirectory dir;
  Evidence evidence;
  std::vector<Json> written;

  explicit ReadBack(std::vector<Json> records) : written(std::move(records)) {
    const auto path = dir.path() / "records.jsonl";
    {
      std::ofstream out(path);
      for (const auto& record : written)
        out << record.dump() << '\n';
    }
    RecordReader reader(evidence);
    reader.read_file(path);
    evidence.finish();
  }
};

std::vector<std::string> issues_of(const Evidence& evidence) {
  std::vector<std::string> out;
  for (const auto& issue : evidence.issues)
    out.push_back(issue.code + ": " + issue.detail);
  return out;
}

TEST(RecordRoundTrip, TheSamplesCoverEveryKindStatusAndComponentTheWritersProduce) {
  // A shrinking sample list would quietly stop checking a writer.
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  for (const auto& sample : samples()) {
    const Json& r = sample.record;
    seen.emplace(r.at("kind"), r.at("status"), r.value("component", ""));
  }
  const std::set<std::tuple<std::string, std::string, std::string>> expected = {
      {"collective", "ok", ""},
      {"collective", "fail", ""},
      {"collective", "skipped", ""},
      {"collective", "timeout", ""},
      {"burn", "ok", ""},
      {"burn", "fail", ""},
      {"membw", "ok", ""},
      {"membw", "fail", ""},
      {"link", "ok", ""},
      {"link", "skipped", ""},
      {"link", "timeout", ""},
      {"health", "ok", "gpu"},
      {"health", "error", "gpu"},
      {"health", "skipped", "gpu"},
      {"health", "ok", "ib_port"},
      {"health", "skipped", "ib_port"},
      {"health", "ok", "node"},
      {"health", "timeout", "node"},
      {"health", "error", "node"},
      {"p2p", "ok", ""},
      {"p2p", "skipped", ""}};
  EXPECT_EQ(seen, expected);
}

TEST(RecordRoundTrip, EveryWrittenRecordIsValidAgainstTheSchema) {
  const auto schema = test_support::JsonSchemaSubset::record_schema();
  for (const auto& sample : samples()) {
    EXPECT_THAT(schema.errors(sample.record), IsEmpty()) << sample.name << "\n"
                                                         << sample.record.dump();
  }
}

TEST(RecordRoundTrip, EveryWrittenRecordIsReadBackNoneDroppedOrUnreadable) {
  std::vector<Json> all;
  for (const auto& sample : samples())
    all.push_back(sample.record);
  const ReadBack back(all);
  EXPECT_THAT(issues_of(back.evidence), IsEmpty());
  ASSERT_EQ(back.evidence.files.size(), 1u);
  EXPECT_EQ(back.evidence.files[0].records, all.size());
  EXPECT_EQ(back.evidence.files[0].unreadable, 0u);
  const auto& e = back.evidence;
  EXPECT_EQ(e.collectives.size(), of_kind("collective").size() - 1);  // + the timeout
  EXPECT_EQ(e.timeouts.size(), 1u);
  EXPECT_EQ(e.burns.size(), of_kind("burn").size());
  EXPECT_EQ(e.membws.size(), of_kind("membw").size());
  EXPECT_EQ(e.links.size(), of_kind("link").size());
  EXPECT_EQ(e.p2p.size(), of_kind("p2p").size());
  EXPECT_EQ(e.gpu_health.size() + e.ib_ports.size() + e.node_health.size(),
            of_kind("health").size());
}

TEST(RecordRoundTrip, P2pRecordsKeepTheirEndsMethodFiguresAndWhySkipped) {
  const ReadBack back(of_kind("p2p"));
  const auto& e = back.evidence;
  EXPECT_THAT(issues_of(e), IsEmpty());
  ASSERT_EQ(e.p2p.size(), 5u);
  const P2pEvidence& forward = e.p2p[0];
  EXPECT_TRUE(forward.measured());
  EXPECT_EQ(e.text(forward.path), "gpu_gpu");
  EXPECT_EQ(e.text(forward.method), "copy_engine");
  EXPECT_EQ(e.text(forward.access), "write");
  EXPECT_TRUE(forward.bidirectional);
  EXPECT_EQ(forward.src_gpu, 0);
  EXPECT_EQ(forward.dst_gpu, 1);
  EXPECT_EQ(forward.gpu.index, 0);
  EXPECT_EQ(forward.peer_access, true);
  EXPECT_EQ(forward.bytes, 256u << 20);
  ASSERT_TRUE(forward.bytes_per_s);
  EXPECT_NEAR(*forward.bytes_per_s, 8.0 * (256u << 20) / 5.42e-3, 1);
  EXPECT_EQ(e.p2p[1].src_gpu, 1);  // the reverse stream of the same run
  EXPECT_EQ(e.p2p[1].dst_gpu, 0);
  const P2pEvidence& h2d = e.p2p[2];
  EXPECT_EQ(e.text(h2d.path), "host_gpu");
  EXPECT_EQ(h2d.src_gpu, -1);
  EXPECT_EQ(h2d.dst_gpu, 1);
  EXPECT_EQ(h2d.host_numa_node, 0);
  EXPECT_EQ(h2d.host_numa_local, true);
  ASSERT_TRUE(e.p2p[3].latency_s);
  EXPECT_NEAR(*e.p2p[3].latency_s, 1.31e-2 / 20000, 1e-12);
  const P2pEvidence& lone = e.p2p[4];
  EXPECT_FALSE(lone.measured());
  EXPECT_EQ(lone.status, RecordStatus::kSkipped);
  EXPECT_EQ(lone.reason, "one GPU");
  EXPECT_EQ(e.text(lone.path), "gpu_gpu");
}

TEST(RecordRoundTrip, LinkRecordsKeepTheirEndsInInitiatorOrderAndTheirBandwidth) {
  const ReadBack back(of_kind("link"));
  const Evidence& e = back.evidence;
  ASSERT_EQ(e.links.size(), 3u);
  const LinkEvidence& measured = e.links[0];
  EXPECT_TRUE(measured.measured());
  EXPECT_EQ(e.node_name(measured.writer), "node3");
  EXPECT_EQ(e.node_name(measured.from), "node3");  // the initiating end comes first
  EXPECT_EQ(e.node_name(measured.to), "node1");
  EXPECT_EQ(e.text(measured.test), "write_bw");
  EXPECT_DOUBLE_EQ(*measured.bytes_per_s, 4.0 * (4 << 20) / 1.5e-3);
  EXPECT_FALSE(e.links[1].measured());
  EXPECT_EQ(e.node_name(e.links[1].from), "node0");
  // A timeout is about the link it names, both ends, not about its writer.
  const LinkEvidence& timeout = e.links[2];
  EXPECT_EQ(timeout.status, RecordStatus::kTimeout);
  EXPECT_EQ(e.node_name(timeout.writer), "node0");
  EXPECT_EQ(e.node_name(timeout.from), "node1");
  EXPECT_EQ(e.node_name(timeout.to), "node3");
}

TEST(RecordRoundTrip, CollectiveMeasurementsKeepBandwidthWrongRanksAndStraggler) {
  const ReadBack back(of_kind("collective"));
  const auto& e = back.evidence;
  ASSERT_EQ(e.collectives.size() + e.timeouts.size(), back.written.size());
  std::size_t measured = 0;
  for (std::size_t i = 0; i < e.collectives.size(); ++i) {
    const CollectiveEvidence& c = e.collectives[i];
    const Json& w = back.written[c.ref.line - 1];
    SCOPED_TRACE(w.dump());
    EXPECT_EQ(e.text(c.collective), w.at("collective").get<std::string>());
    EXPECT_EQ(c.bytes, w.at("bytes").get<std::uint64_t>());
    EXPECT_EQ(c.in_place, w.at("in_place").get<bool>());
    EXPECT_EQ(c.pair_list, w.contains("pair_list"));
    EXPECT_EQ(c.scope,
              w.at("scope") == "pairs" ? CollectiveScope::kPairs : CollectiveScope::kCluster);
    if (!c.measured()) {
      EXPECT_EQ(c.status, RecordStatus::kSkipped);
      EXPECT_EQ(e.text(c.reason), w.at("reason").get<std::string>());
      continue;
    }
    ++measured;
    EXPECT_DOUBLE_EQ(c.busbw_bytes_per_s, w.at("busbw_bytes_per_s").get<double>());
    EXPECT_TRUE(c.checked);
    EXPECT_EQ(c.straggler_rank, w.at("straggler").at("rank").get<int>());
    EXPECT_EQ(e.node_name(c.straggler), w.at("straggler").at("host").get<std::string>());
    const auto wrong = e.wrong_ranks_of(c);
    ASSERT_EQ(wrong.size(), w.at("wrong_ranks").size());
    for (std::size_t k = 0; k < wrong.size(); ++k) {
      EXPECT_EQ(wrong[k].rank, w.at("wrong_ranks")[k].at("rank").get<int>());
      EXPECT_EQ(e.node_name(wrong[k].node), w.at("wrong_ranks")[k].at("host").get<std::string>());
      EXPECT_EQ(wrong[k].elements, w.at("wrong_ranks")[k].at("wrong_elements").get<std::int64_t>());
    }
    EXPECT_EQ(c.status, w.at("status") == "fail" ? RecordStatus::kFail : RecordStatus::kOk);
  }
  EXPECT_GE(measured, 3u);
  ASSERT_EQ(e.timeouts.size(), 1u);
  const Json timeout = of_kind("collective", "timeout").at(0);
  EXPECT_EQ(e.timeouts[0].operation, timeout.at("operation").get<std::string>());
  EXPECT_DOUBLE_EQ(e.timeouts[0].timeout_s, timeout.at("timeout_s").get<double>());
  ASSERT_EQ(e.timeouts[0].not_arrived.size(), 1u);
  EXPECT_EQ(e.timeouts[0].not_arrived[0].first, 3);
  EXPECT_EQ(e.node_name(e.timeouts[0].not_arrived[0].second), "node3");
  EXPECT_EQ(e.timeouts[0].members.size(), 4u);
}

TEST(RecordRoundTrip, BurnRecordsKeepGpuThroughputMiscomparesAndPeerVerdict) {
  const ReadBack back(of_kind("burn"));
  const auto& e = back.evidence;
  ASSERT_EQ(e.burns.size(), back.written.size());
  for (const BurnEvidence& b : e.burns) {
    const Json& w = back.written[b.ref.line - 1];
    SCOPED_TRACE(w.dump());
    EXPECT_EQ(e.node_name(b.node), w.at("host").get<std::string>());
    EXPECT_EQ(b.gpu.index, w.at("gpu").at("index").get<int>());
    EXPECT_EQ(e.text(b.gpu.uuid), w.at("gpu").at("uuid").get<std::string>());
    EXPECT_EQ(e.text(b.kernel), w.at("kernel").get<std::string>());
    EXPECT_EQ(b.tflops, w.at("tflops").get<double>());
    EXPECT_EQ(b.miscompares, w.at("miscompares").get<std::int64_t>());
    EXPECT_EQ(b.peer_mismatch, w.at("peer_mismatch").get<bool>());
    EXPECT_EQ(b.peer_gpus, w.at("peer_gpus").get<int>());
    ASSERT_EQ(b.throttle.size(), w.at("telemetry").at("throttle").size());
    EXPECT_EQ(e.text(b.throttle.at(0).reason), "sw_power_cap");
    EXPECT_EQ(b.status, w.at("status") == "fail" ? RecordStatus::kFail : RecordStatus::kOk);
    if (b.status == RecordStatus::kFail) {
      EXPECT_THAT(b.reason, HasSubstr("12 result element"));
    }
  }
}

TEST(RecordRoundTrip, MembwRecordsKeepBandwidthsAndIntegrityErrors) {
  const ReadBack back(of_kind("membw"));
  const auto& e = back.evidence;
  ASSERT_EQ(e.membws.size(), back.written.size());
  for (const MembwEvidence& m : e.membws) {
    const Json& w = back.written[m.ref.line - 1];
    SCOPED_TRACE(w.dump());
    EXPECT_EQ(m.gpu.index, w.at("gpu").at("index").get<int>());
    EXPECT_EQ(m.read, w.at("bandwidth").at("read_bytes_per_s").get<double>());
    EXPECT_EQ(m.copy, w.at("bandwidth").at("copy_bytes_per_s").get<double>());
    EXPECT_EQ(m.memcpy_d2d, w.at("bandwidth").at("memcpy_d2d_bytes_per_s").get<double>());
    EXPECT_EQ(m.h2d, w.at("host_transfer").at("h2d_bytes_per_s").get<double>());
    EXPECT_EQ(m.integrity_errors, w.at("integrity").at("errors").get<std::int64_t>());
    EXPECT_EQ(m.bytes_tested, w.at("integrity").at("bytes_tested").get<std::int64_t>());
    if (*m.integrity_errors > 0) {
      EXPECT_THAT(m.first_error, HasSubstr("0x7f3a40"));
    }
  }
}

TEST(RecordRoundTrip, HealthRecordsOfEveryComponentKeepWhatTheRulesJudge) {
  const ReadBack back(of_kind("health"));
  const auto& e = back.evidence;
  EXPECT_THAT(issues_of(e), IsEmpty());
  // Scripted node: GPU 0 healthy, GPU 1 lost, GPU 2 without a handle; a bare node's skipped GPU.
  ASSERT_EQ(e.gpu_health.size(), 4u);
  const GpuHealthEvidence& healthy = e.gpu_health[0];
  EXPECT_EQ(healthy.status, RecordStatus::kOk);
  EXPECT_EQ(healthy.gpu.index, 0);
  EXPECT_EQ(healthy.ecc_volatile_uncorrected, 0);
  EXPECT_EQ(healthy.remap_failure, false);
  EXPECT_EQ(healthy.pcie_gen, 5);
  EXPECT_EQ(healthy.pcie_width, 16);
  ASSERT_TRUE(healthy.nvlinks.has_value());
  EXPECT_EQ(healthy.nvlinks->size(), 2u);
  EXPECT_EQ(healthy.nvlinks->at(1).crc_flit_errors, std::nullopt);  // null stays unknown
  ASSERT_EQ(healthy.xids.size(), 1u);
  EXPECT_EQ(healthy.xids[0].xid, 79);
  EXPECT_FALSE(healthy.lost);
  // A lost GPU is an error naming why, with `lost: true`, which the gpu_lost rule judges: also
  // the one whose handle NVML refused as lost.
  EXPECT_TRUE(e.gpu_health[1].lost);
  EXPECT_TRUE(e.gpu_health[2].lost);
  EXPECT_EQ(e.gpu_health[1].status, RecordStatus::kError);
  EXPECT_THAT(e.gpu_health[1].reason, HasSubstr("GPU 1 is lost"));
  EXPECT_EQ(e.gpu_health[1].temperature_c, std::nullopt);
  EXPECT_EQ(e.gpu_health[2].status, RecordStatus::kError);
  EXPECT_EQ(e.gpu_health[2].gpu.index, 2);
  EXPECT_THAT(e.gpu_health[2].reason, HasSubstr("nvmlDeviceGetHandleByIndex_v2(2)"));
  EXPECT_EQ(e.gpu_health[3].status, RecordStatus::kSkipped);
  EXPECT_EQ(e.node_name(e.gpu_health[3].node), "node1");

  ASSERT_EQ(e.ib_ports.size(), 3u);
  EXPECT_EQ(e.text(e.ib_ports[0].device), "mlx5_0");
  EXPECT_EQ(e.text(e.ib_ports[0].state), "ACTIVE");
  EXPECT_EQ(e.ib_ports[0].rate_gbps, 400);
  EXPECT_EQ(e.ib_ports[0].counters.size(), 3u);
  EXPECT_EQ(e.text(e.ib_ports[1].state), "");  // unreadable state
  EXPECT_EQ(e.ib_ports[1].rate_gbps, std::nullopt);
  EXPECT_EQ(e.ib_ports[2].status, RecordStatus::kSkipped);

  ASSERT_EQ(e.node_health.size(), 4u);
  EXPECT_EQ(e.node_health[0].gpu_count, 3);
  EXPECT_EQ(e.node_health[0].ib_port_count, 2);
  EXPECT_EQ(e.node_health[1].gpu_count, std::nullopt);  // no NVML: unknown, not zero
  // The health stage's own timeout and error stand for its node's component.
  EXPECT_EQ(e.node_health[2].status, RecordStatus::kTimeout);
  EXPECT_EQ(e.node_name(e.node_health[2].node), "node2");
  EXPECT_EQ(e.node_health[3].status, RecordStatus::kError);
  EXPECT_THAT(e.node_health[3].reason, HasSubstr("Permission denied"));
  EXPECT_TRUE(e.health_failures.empty());
}

// Struct, JSON, schema, reader, per kind: each record definition (records/*.hpp) filled with
// distinctive values must reach the validator's evidence as those values, so the writer's and
// the reader's field names cannot drift apart.

RecordOrigin origin_of(const std::string& host, int rank, std::optional<int> gpu = std::nullopt) {
  RecordOrigin origin;
  origin.run_id = "struct-roundtrip-1";
  origin.host = host;
  origin.rank = rank;
  origin.local_rank = rank % 4;
  if (gpu) {
    origin.gpu = GpuIdentity{*gpu, "GPU-5e1f0c2a-0000-4000-8000-00000000000" + std::to_string(*gpu),
                             "0000:1b:00.0", "NVIDIA H100 80GB HBM3"};
  }
  return origin;
}

// Every record valid against docs/schema/record.schema.json, then read back as certify reads it.
struct StructReadBack : ReadBack {
  explicit StructReadBack(std::vector<Json> records) : ReadBack(checked(std::move(records))) {}

  static std::vector<Json> checked(std::vector<Json> records) {
    const auto schema = test_support::JsonSchemaSubset::record_schema();
    for (const auto& record : records)
      EXPECT_THAT(schema.errors(record), IsEmpty()) << record.dump();
    return records;
  }
};

CollectiveRecord node_scope_allgather() {
  CollectiveRecord r;
  r.origin = origin_of("nodeA", 0);
  r.status = RecordStatus::kFail;
  r.backend = "mpi";
  r.collective = "allgather";
  r.dtype = "float";
  r.bytes = 3 << 20;
  r.count = 196608;
  r.nranks = 4;
  r.nodes = 1;
  r.scope = CollectiveRecord::kScopeNode;
  r.group = 2;
  r.group_nodes = {"nodeC"};
  r.in_place = true;
  r.cycle = 1;
  CollectiveResult& m = r.result.emplace();
  m.check = true;
  m.iterations = 40;
  m.warmup_iterations = 5;
  m.aggregation = "mean";
  m.time_s = 2.5e-4;
  m.timing = "back_to_back";
  m.algbw_bytes_per_s = 1.2e10;
  m.busbw_bytes_per_s = 9.4e9;
  m.bus_factor = 0.75;
  m.group_ranks = {8, 9, 10, 11};
  m.rank_time_s = {2.4e-4, 2.5e-4, 2.6e-4, 1.0e-4};
  m.rank_time = {1.0e-4, 2.0e-4, 2.6e-4};
  m.straggler = {11, "nodeC", 1.0e-4, 0.5e-4};
  m.iteration_time = {40, 1e-4, 2e-4, 3e-4, 3.1e-4, 2.1e-4, 0.2, {2e-4, 1e-4, 3.1e-4}};
  m.wrong_elements = 17;
  m.wrong_ranks = {{9, "nodeC", 12, 2}, {10, "nodeC", 5, 1}};
  m.adaptive = AdaptiveStop{2.0, 1.5, "ci"};
  r.reason = "17 wrong elements on 2 rank(s), first rank 9 (nodeC)";
  return r;
}

TEST(RecordStructRoundTrip, CollectiveMeasurementReachesTheEvidenceItDescribes) {
  const CollectiveRecord w = node_scope_allgather();
  CollectiveRecord skipped = node_scope_allgather();
  skipped.status = RecordStatus::kSkipped;
  skipped.collective = "sendrecv";
  skipped.scope = CollectiveRecord::kScopePairs;
  skipped.round = 3;
  skipped.pair_list = true;
  skipped.result.reset();
  skipped.reason = "the backend cannot run sendrecv in place";
  const StructReadBack back(std::vector<Json>{to_json(w), to_json(skipped)});
  const Evidence& e = back.evidence;
  EXPECT_THAT(issues_of(e), IsEmpty());
  ASSERT_EQ(e.collectives.size(), 2u);
  const CollectiveEvidence& c = e.collectives[0];
  EXPECT_EQ(c.status, RecordStatus::kFail);
  EXPECT_EQ(e.node_name(c.writer), "nodeA");
  EXPECT_EQ(e.text(c.collective), "allgather");
  EXPECT_EQ(c.scope, CollectiveScope::kNode);
  EXPECT_TRUE(c.in_place);
  EXPECT_TRUE(c.checked);
  EXPECT_FALSE(c.pair_list);
  EXPECT_EQ(c.nranks, 4u);
  EXPECT_EQ(c.bytes, 3u << 20);
  EXPECT_DOUBLE_EQ(c.busbw_bytes_per_s, 9.4e9);
  EXPECT_EQ(c.straggler_rank, 11);
  EXPECT_EQ(e.node_name(c.straggler), "nodeC");
  EXPECT_FLOAT_EQ(c.straggler_lead_fraction, 0.25f);  // lead 0.5e-4 over the median 2e-4
  ASSERT_NE(c.group, kNoString);
  ASSERT_EQ(e.groups.at(c.group).size(), 1u);
  EXPECT_EQ(e.node_name(e.groups.at(c.group)[0]), "nodeC");
  const auto wrong = e.wrong_ranks_of(c);
  ASSERT_EQ(wrong.size(), 2u);
  EXPECT_EQ(wrong[1].rank, 10);
  EXPECT_EQ(e.node_name(wrong[1].node), "nodeC");
  EXPECT_EQ(wrong[1].elements, 5);
  EXPECT_EQ(wrong[1].iterations, 1);
  EXPECT_EQ(e.text(c.reason), *w.reason);

  const CollectiveEvidence& s = e.collectives[1];
  EXPECT_EQ(s.status, RecordStatus::kSkipped);
  EXPECT_EQ(s.scope, CollectiveScope::kPairs);
  EXPECT_TRUE(s.pair_list);
  EXPECT_EQ(e.text(s.reason), *skipped.reason);
}

TEST(RecordStructRoundTrip, CollectiveTimeoutNamesWhoDidNotArrive) {
  CollectiveTimeoutRecord w;
  w.origin = origin_of("nodeB", 1);
  w.backend = "nccl";
  w.scope = CollectiveRecord::kScopeCluster;
  w.operation = "allreduce float sum 1 MiB in-place";
  w.timeout_s = 30;
  w.nranks = 3;
  w.not_arrived = {{2, "nodeC"}};
  w.attributed = true;
  w.rank_states = {{0, "nodeA", true, 7, true, 29.5},
                   {1, "nodeB", true, 7, true, 29.4},
                   {2, "nodeC", false, 6, false, std::nullopt}};
  w.reason = "rank 2 (nodeC) did not arrive at allreduce float sum 1 MiB in-place within 30 s";
  const StructReadBack back(std::vector<Json>{to_json(w)});
  const Evidence& e = back.evidence;
  EXPECT_THAT(issues_of(e), IsEmpty());
  ASSERT_EQ(e.timeouts.size(), 1u);
  const TimeoutEvidence& t = e.timeouts[0];
  EXPECT_EQ(e.node_name(t.writer), "nodeB");
  EXPECT_EQ(t.scope, CollectiveScope::kCluster);
  EXPECT_EQ(t.operation, w.operation);
  EXPECT_DOUBLE_EQ(t.timeout_s, 30);
  EXPECT_TRUE(t.attributed);
  ASSERT_EQ(t.not_arrived.size(), 1u);
  EXPECT_EQ(t.not_arrived[0].first, 2);
  EXPECT_EQ(e.node_name(t.not_arrived[0].second), "nodeC");
  EXPECT_EQ(t.members.size(), 3u);
  EXPECT_EQ(t.reason, w.reason);
}

TEST(RecordStructRoundTrip, RunRecordGivesTheRunTheNodeOfEveryRank) {
  RunRecord w;
  w.origin = origin_of("nodeA", 0);
  w.command = "sweep";
  w.backend = "mpi";
  for (int rank = 0; rank < 3; ++rank) {
    RankIdentity identity;
    identity.rank = rank;
    identity.process = rank;
    identity.node = rank == 2 ? "nodeC" : "nodeA";
    identity.hostname = "host" + std::to_string(rank);
    identity.local_rank = rank;
    identity.pid = 100 + rank;
    w.ranks.push_back(identity);
  }
  const Json json = to_json(w);
  EXPECT_EQ(json.at("command"), "sweep");
  EXPECT_EQ(json.at("backend"), "mpi");
  const StructReadBack back(std::vector<Json>{json});
  const Evidence& e = back.evidence;
  EXPECT_THAT(issues_of(e), IsEmpty());
  ASSERT_EQ(e.runs.size(), 1u);
  EXPECT_TRUE(e.runs[0].has_rank_map);
  ASSERT_EQ(e.runs[0].rank_nodes.size(), 3u);
  EXPECT_EQ(e.node_name(e.runs[0].rank_nodes[0]), "nodeA");
  EXPECT_EQ(e.node_name(e.runs[0].rank_nodes[2]), "nodeC");
}

TEST(RecordStructRoundTrip, StageErrorKeepsTheRanksNodeReasonAndTheFailedCall) {
  ApiError api;
  api.api = "NCCL";
  api.call = "ncclCommInitRank(slot.comm.out(), size_, id, slot.rank)";
  api.where = "src/comm/nccl_communicator.cpp:227";
  api.code = 2;
  api.code_name = "2";
  api.text = "unhandled system error";
  api.host = "nodeD";
  api.device = 3;
  StageErrorRecord w = stage_error_record(origin_of("nodeD", 3), "collective", ApiFailure(api));
  w.backend = "nccl";
  const Json json = to_json(w);
  EXPECT_EQ(json.at("api_error").at("api"), "NCCL");
  EXPECT_EQ(json.at("api_error").at("where"), api.where);
  EXPECT_EQ(json.at("api_error").at("device"), 3);
  const StructReadBack back(std::vector<Json>{json});
  const Evidence& e = back.evidence;
  EXPECT_THAT(issues_of(e), IsEmpty());
  ASSERT_EQ(e.collective_errors.size(), 1u);
  EXPECT_EQ(e.collective_errors[0].status, RecordStatus::kError);
  EXPECT_EQ(e.node_name(e.collective_errors[0].node), "nodeD");
  EXPECT_EQ(e.collective_errors[0].reason, describe(api));
}

TEST(RecordStructRoundTrip, StageTimeoutIsAFailureOfTheWritersNode) {
  StageTimeoutRecord w;
  w.origin = origin_of("nodeE", 0);
  w.kind = "membw";
  w.reason = "process 1 (nodeF) did not reach 'finish: gathering records' within 8 s";
  w.operation = "finish: gathering records";
  w.timeout_s = 8;
  const Json json = to_json(w);
  EXPECT_EQ(json.at("status"), "timeout");
  EXPECT_EQ(json.at("operation"), w.operation);
  EXPECT_EQ(json.at("timeout_s"), 8.0);
  const StructReadBack back(std::vector<Json>{json});
  EXPECT_THAT(issues_of(back.evidence), IsEmpty());
  ASSERT_EQ(back.evidence.membws.size(), 1u);
  EXPECT_EQ(back.evidence.membws[0].status, RecordStatus::kTimeout);
  EXPECT_EQ(back.evidence.node_name(back.evidence.membws[0].node), "nodeE");
}

TEST(RecordStructRoundTrip, BurnMeasurementAndAnUnmeasuredGpuReachTheEvidence) {
  BurnRecord w;
  w.origin = origin_of("nodeD", 3, 3);
  w.status = RecordStatus::kFail;
  w.reason = "GPU 3 computed 4 result element(s) differently from its own first result";
  w.kernel = "gemm_fp8";
  BurnMeasurement& m = w.measurement.emplace();
  m.matrix = BurnMatrix{4096, 4096, 4096, "fp8_e4m3"};
  m.requested_duration_s = 30;
  m.duration_s = 30.01;
  m.iterations = 999;
  m.tflops = 1234.5;
  m.miscompares = 4;
  m.peer_mismatch = true;
  m.peer_gpus = 6;
  TelemetrySeries series;
  for (int i = 0; i < 3; ++i) {
    TelemetrySample sample;
    sample.time_s = 0.5 * i;
    sample.clock_event_reasons = 0x4;  // sw_power_cap
    series.samples.push_back(sample);
  }
  series.xid_events = std::vector<XidEvent>{{48, "2026-11-25T10:00:00.000Z"}};
  m.telemetry = telemetry_json(series);
  m.checked_results = 30;
  m.window_s = 1;
  BurnRecord unmeasured;
  unmeasured.origin = origin_of("nodeD", 4, 4);
  unmeasured.status = RecordStatus::kSkipped;
  unmeasured.reason = "GPU 4: compute capability 8.0 has no FP8 tensor cores";
  unmeasured.kernel = "gemm_fp8";
  const StructReadBack back(std::vector<Json>{to_json(w), to_json(unmeasured)});
  const Evidence& e = back.evidence;
  EXPECT_THAT(issues_of(e), IsEmpty());
  ASSERT_EQ(e.burns.size(), 2u);
  const BurnEvidence& b = e.burns[0];
  EXPECT_EQ(b.status, RecordStatus::kFail);
  EXPECT_EQ(e.node_name(b.node), "nodeD");
  EXPECT_EQ(b.gpu.index, 3);
  EXPECT_EQ(e.text(b.gpu.uuid), w.origin.gpu->uuid);
  EXPECT_EQ(e.text(b.kernel), "gemm_fp8");
  EXPECT_EQ(b.tflops, 1234.5);
  EXPECT_EQ(b.miscompares, 4);
  EXPECT_EQ(b.peer_mismatch, true);
  EXPECT_EQ(b.peer_gpus, 6);
  ASSERT_EQ(b.throttle.size(), 1u);
  EXPECT_EQ(e.text(b.throttle[0].reason), "sw_power_cap");
  EXPECT_GT(b.throttle[0].seconds, 0);
  ASSERT_EQ(b.xids.size(), 1u);
  EXPECT_EQ(b.xids[0].xid, 48);
  EXPECT_EQ(b.reason, *w.reason);
  const BurnEvidence& u = e.burns[1];
  EXPECT_EQ(u.status, RecordStatus::kSkipped);
  EXPECT_EQ(u.tflops, std::nullopt);
  EXPECT_EQ(u.reason, *unmeasured.reason);
}

TEST(RecordStructRoundTrip, MembwMeasurementAndAGpulessProcessReachTheEvidence) {
  MembwRecord w;
  w.origin = origin_of("nodeE", 0, 0);
  w.status = RecordStatus::kFail;
  w.reason = "GPU 0: 2 memory word(s) read back wrong in 8 GiB tested";
  MembwMeasurement& m = w.measurement.emplace();
  m.bandwidth = MembwBandwidth{3.1e12, 2.9e12, 3.0e12, 2.8e12, 3.35e12};
  m.fraction_of_peak = 3.1 / 3.35;
  m.fraction_of_memcpy = 3.0 / 2.8;
  m.host_transfer = MembwHostTransfer{5.5e10, 5.2e10, 1, true};
  m.integrity = MembwIntegrity{8ULL << 30, {"walking_ones"}, 2, {{0x2000, 0, 4, "walking_ones"}}};
  m.buffer_bytes = 1ULL << 30;
  MembwRecord gpuless;
  gpuless.origin = origin_of("nodeE", 1);
  gpuless.status = RecordStatus::kSkipped;
  gpuless.reason = "no GPU visible to this process";
  const StructReadBack back(std::vector<Json>{to_json(w), to_json(gpuless)});
  const Evidence& e = back.evidence;
  EXPECT_THAT(issues_of(e), IsEmpty());
  ASSERT_EQ(e.membws.size(), 2u);
  const MembwEvidence& r = e.membws[0];
  EXPECT_EQ(r.status, RecordStatus::kFail);
  EXPECT_EQ(r.gpu.index, 0);
  EXPECT_EQ(r.read, 3.1e12);
  EXPECT_EQ(r.write, 2.9e12);
  EXPECT_EQ(r.copy, 3.0e12);
  EXPECT_EQ(r.memcpy_d2d, 2.8e12);
  EXPECT_EQ(r.h2d, 5.5e10);
  EXPECT_EQ(r.d2h, 5.2e10);
  EXPECT_EQ(r.integrity_errors, 2);
  EXPECT_EQ(r.bytes_tested, std::int64_t{8} << 30);
  EXPECT_EQ(r.first_error, "offset 0x2000, pattern walking_ones");
  EXPECT_EQ(e.membws[1].status, RecordStatus::kSkipped);
  EXPECT_EQ(e.membws[1].gpu.index, -1);
  EXPECT_EQ(e.membws[1].read, std::nullopt);
}

TEST(RecordStructRoundTrip, LinkMeasurementCountersAndALoneSkipReachTheEvidence) {
  LinkRecord w;
  w.origin = origin_of("nodeF", 2);
  w.transport = "verbs";
  w.memory = "gpu";
  w.test = "write_bw";
  w.round = 1;
  w.rail = 3;
  w.nodes = {"nodeF", "nodeG"};
  w.ranks = {2, 5};
  w.devices = {"mlx5_3:1", "mlx5_3:1"};
  LinkMeasurement& m = w.measurement.emplace();
  m.bytes = 4 << 20;
  m.window = 4;
  m.iterations = 2;
  m.warmup = 1;
  m.samples_s = {4.1e-4, 4.3e-4};
  m.min_s = 4.1e-4;
  m.median_s = 4.2e-4;
  m.max_s = 4.3e-4;
  m.bytes_per_s = 3.99e10;
  w.counter_deltas = std::vector<LinkCounterDeltas>{
      {"nodeG", "mlx5_3", 1, {{"symbol_error", 7}, {"link_downed", 0}}, {}}};
  LinkRecord alone;
  alone.origin = origin_of("nodeH", 0);
  alone.status = RecordStatus::kSkipped;
  alone.reason = "one node: no partner to test a link with";
  alone.transport = "mpi";
  alone.memory = "host";
  alone.nodes = {"nodeH"};
  alone.ranks = {0};
  alone.devices = {std::nullopt};
  const StructReadBack back(std::vector<Json>{to_json(w), to_json(alone)});
  const Evidence& e = back.evidence;
  EXPECT_THAT(issues_of(e), IsEmpty());
  ASSERT_EQ(e.links.size(), 2u);
  const LinkEvidence& r = e.links[0];
  EXPECT_TRUE(r.measured());
  EXPECT_EQ(e.text(r.transport), "verbs");
  EXPECT_EQ(e.text(r.memory), "gpu");
  EXPECT_EQ(e.text(r.test), "write_bw");
  EXPECT_EQ(r.rail, 3);
  EXPECT_EQ(e.node_name(r.from), "nodeF");
  EXPECT_EQ(e.node_name(r.to), "nodeG");
  EXPECT_EQ(r.bytes, 4u << 20);
  EXPECT_EQ(r.bytes_per_s, 3.99e10);
  EXPECT_EQ(r.latency_s, std::nullopt);
  ASSERT_EQ(r.counters.size(), 1u);  // only counters that grew
  EXPECT_EQ(e.node_name(r.counters[0].node), "nodeG");
  EXPECT_EQ(e.text(r.counters[0].device), "mlx5_3");
  EXPECT_EQ(r.counters[0].port, 1);
  EXPECT_EQ(e.text(r.counters[0].counter), "symbol_error");
  EXPECT_EQ(r.counters[0].delta, 7);
  const LinkEvidence& skip = e.links[1];
  EXPECT_FALSE(skip.measured());
  EXPECT_EQ(skip.status, RecordStatus::kSkipped);
  EXPECT_EQ(e.node_name(skip.from), "nodeH");
  EXPECT_EQ(skip.to, kNoString);
  EXPECT_EQ(skip.reason, "one node: no partner to test a link with");
}

TEST(RecordStructRoundTrip, HealthComponentsReachTheEvidence) {
  HealthRecord gpu;
  gpu.origin = origin_of("nodeF", 0, 1);
  gpu.component = HealthRecord::kComponentGpu;
  GpuHealthFields& g = gpu.fields.emplace<GpuHealthFields>();
  g.name = "NVIDIA H100 80GB HBM3";
  g.ecc = GpuEcc{true, {11, 3}, {110, 4}};
  g.remapped_rows = GpuRemappedRows{2, 1, true, false};
  g.retired_pages = GpuRetiredPages{5, 6, true};
  g.pcie = GpuPcie{4, 5, 8, 16, 21};
  g.nvlink = std::vector<GpuNvLink>{{0, true, 1, 2, 3, 4}, {1, false, {}, {}, {}, {}}};
  g.temperature_c = 71;
  g.clock_event_reasons = std::vector<std::string>{"hw_slowdown"};
  g.xid_events = std::vector<XidEvent>{{79, "2026-11-25T10:00:00.000Z"}};
  g.query_errors = {{"serial", "Insufficient Permissions"}};
  HealthRecord port;
  port.origin = origin_of("nodeF", 0);
  port.component = HealthRecord::kComponentIbPort;
  IbPortHealthFields& p = port.fields.emplace<IbPortHealthFields>();
  p.device = "mlx5_3";
  p.port = 1;
  p.state = "DOWN";
  p.phys_state = "Polling";
  p.rate_gbps = 200;
  p.link_layer = "InfiniBand";
  p.counters = {{"symbol_error", 9}, {"link_downed", 2}};
  HealthRecord node;
  node.origin = origin_of("nodeF", 0);
  node.component = HealthRecord::kComponentNode;
  NodeHealthFields& n = node.fields.emplace<NodeHealthFields>();
  n.gpu_count = 8;
  n.ib_port_count = 4;
  HealthRecord unreachable;
  unreachable.origin = origin_of("nodeF", 0, 2);
  unreachable.status = RecordStatus::kError;
  unreachable.reason = "nvmlDeviceGetHandleByIndex_v2(2) returned GPU is lost";
  unreachable.component = HealthRecord::kComponentGpu;
  const StructReadBack back(
      std::vector<Json>{to_json(gpu), to_json(port), to_json(node), to_json(unreachable)});
  const Evidence& e = back.evidence;
  EXPECT_THAT(issues_of(e), IsEmpty());
  ASSERT_EQ(e.gpu_health.size(), 2u);
  const GpuHealthEvidence& h = e.gpu_health[0];
  EXPECT_EQ(h.status, RecordStatus::kOk);
  EXPECT_EQ(h.gpu.index, 1);
  EXPECT_EQ(h.ecc_volatile_corrected, 11);
  EXPECT_EQ(h.ecc_volatile_uncorrected, 3);
  EXPECT_EQ(h.remap_correctable, 2);
  EXPECT_EQ(h.remap_uncorrectable, 1);
  EXPECT_EQ(h.remap_pending, true);
  EXPECT_EQ(h.remap_failure, false);
  EXPECT_EQ(h.retired_single_bit, 5);
  EXPECT_EQ(h.retired_double_bit, 6);
  EXPECT_EQ(h.retired_pending, true);
  EXPECT_EQ(h.pcie_gen, 4);
  EXPECT_EQ(h.pcie_gen_max, 5);
  EXPECT_EQ(h.pcie_width, 8);
  EXPECT_EQ(h.pcie_width_max, 16);
  EXPECT_EQ(h.pcie_replays, 21);
  ASSERT_TRUE(h.nvlinks.has_value());
  ASSERT_EQ(h.nvlinks->size(), 2u);
  EXPECT_EQ(h.nvlinks->at(0).replay_errors, 1);
  EXPECT_EQ(h.nvlinks->at(0).recovery_errors, 2);
  EXPECT_EQ(h.nvlinks->at(0).crc_flit_errors, 3);
  EXPECT_EQ(h.nvlinks->at(0).crc_data_errors, 4);
  EXPECT_EQ(h.nvlinks->at(1).link, 1);
  EXPECT_EQ(h.nvlinks->at(1).active, false);
  EXPECT_EQ(h.nvlinks->at(1).replay_errors, std::nullopt);
  EXPECT_EQ(h.temperature_c, 71);
  ASSERT_EQ(h.clock_events.size(), 1u);
  EXPECT_EQ(e.text(h.clock_events[0]), "hw_slowdown");
  ASSERT_EQ(h.xids.size(), 1u);
  EXPECT_EQ(h.xids[0].xid, 79);
  EXPECT_EQ(e.gpu_health[1].status, RecordStatus::kError);
  EXPECT_EQ(e.gpu_health[1].gpu.index, 2);
  EXPECT_EQ(e.gpu_health[1].reason, *unreachable.reason);

  ASSERT_EQ(e.ib_ports.size(), 1u);
  const IbPortEvidence& ib = e.ib_ports[0];
  EXPECT_EQ(e.text(ib.device), "mlx5_3");
  EXPECT_EQ(ib.port, 1);
  EXPECT_EQ(e.text(ib.state), "DOWN");
  EXPECT_EQ(e.text(ib.phys_state), "Polling");
  EXPECT_EQ(e.text(ib.link_layer), "InfiniBand");
  EXPECT_EQ(ib.rate_gbps, 200);
  ASSERT_EQ(ib.counters.size(), 2u);
  EXPECT_EQ(e.text(ib.counters[0].first), "link_downed");  // written in name order
  EXPECT_EQ(ib.counters[0].second, 2);

  ASSERT_EQ(e.node_health.size(), 1u);
  EXPECT_EQ(e.node_health[0].gpu_count, 8);
  EXPECT_EQ(e.node_health[0].ib_port_count, 4);
}

}  // namespace
}  // namespace commcert
