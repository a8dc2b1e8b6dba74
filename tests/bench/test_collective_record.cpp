#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "bench/collective_record.hpp"
#include "core/json.hpp"

namespace commcert {
namespace {

std::vector<RankIdentity> rank_map() {
  // Four ranks on two nodes.
  std::vector<RankIdentity> ranks;
  for (int r = 0; r < 4; ++r) {
    RankIdentity id;
    id.rank = r;
    id.process = r;
    id.node = r < 2 ? "nodeA" : "nodeB";
    id.hostname = "h";
    id.local_rank = r % 2;
    id.pid = 100 + r;
    id.device = "host";
    ranks.push_back(id);
  }
  return ranks;
}

CollectiveRecordContext context_for(const std::vector<RankIdentity>& ranks) {
  CollectiveRecordContext context;
  context.origin.run_id = "20261121T233900Z-sweep-3f9a1c";
  context.origin.host = "nodeA";
  context.origin.rank = 0;
  context.origin.local_rank = 0;
  context.backend = "mpi";
  context.aggregation = RankAggregation::kMean;
  context.ranks = &ranks;
  return context;
}

Measurement allreduce_measurement() {
  Measurement m;
  m.collective = CollectiveKind::kAllReduce;
  m.type = DataType::kBfloat16;
  m.op = ReduceOp::kAvg;
  m.bytes = 1 << 20;
  m.count = 1 << 19;
  m.nranks = 4;
  m.in_place = true;
  m.cycle = 2;
  m.group_nodes = {"nodeA", "nodeB"};
  m.warmup_iterations = 3;
  m.iteration_seconds = {4e-3, 2e-3, 3e-3, 5e-3, 1e-3};
  const double rank_seconds[] = {2e-3, 3e-3, 1e-3, 4e-3};
  for (int r = 0; r < 4; ++r) {
    RankMeasurement rm;
    rm.rank = r;
    rm.mean_seconds = rank_seconds[r];
    rm.checked = true;
    m.ranks.push_back(rm);
  }
  m.check_requested = true;
  return m;
}

Json schema() {
  std::ifstream in(std::string(COMMCERT_SOURCE_DIR) + "/docs/schema/record.schema.json");
  EXPECT_TRUE(in) << "record.schema.json";
  return Json::parse(in);
}

std::vector<std::string> required_of(const Json& object) {
  return object.at("required").get<std::vector<std::string>>();
}

void expect_has_fields(const Json& record, const std::vector<std::string>& fields,
                       const std::string& what) {
  for (const auto& field : fields)
    EXPECT_TRUE(record.contains(field)) << what << ": " << field;
}

void expect_common_fields(const Json& record, const std::string& status) {
  expect_has_fields(record, required_of(schema()), "common");
  EXPECT_EQ(record.at("schema"), 1);
  EXPECT_EQ(record.at("run_id"), "20261121T233900Z-sweep-3f9a1c");
  EXPECT_EQ(record.at("kind"), "collective");
  EXPECT_EQ(record.at("status"), status);
  EXPECT_TRUE(std::regex_match(record.at("time").get<std::string>(),
                               std::regex(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)")))
      << record.at("time");
  EXPECT_EQ(record.at("host"), "nodeA");
  EXPECT_EQ(record.at("rank"), 0);
  EXPECT_EQ(record.at("local_rank"), 0);
  EXPECT_TRUE(record.at("gpu").is_null());  // host-memory backend
  EXPECT_EQ(record.at("backend"), "mpi");
}

TEST(CollectiveRecord, OkRecordHasTheDocumentedFieldsAndUnits) {
  const auto ranks = rank_map();
  const Json r = collective_record(context_for(ranks), allreduce_measurement());
  expect_common_fields(r, "ok");
  const Json defs = schema().at("$defs");
  expect_has_fields(r, required_of(defs.at("collective_identity")), "identity");
  expect_has_fields(r, required_of(defs.at("collective_measurement")), "measurement");
  EXPECT_FALSE(r.contains("reason"));

  EXPECT_EQ(r.at("collective"), "allreduce");
  EXPECT_EQ(r.at("dtype"), "bfloat16");
  EXPECT_EQ(r.at("redop"), "avg");
  EXPECT_TRUE(r.at("root").is_null());  // not a rooted collective
  EXPECT_EQ(r.at("bytes"), 1 << 20);
  EXPECT_EQ(r.at("count"), 1 << 19);
  EXPECT_EQ(r.at("nranks"), 4);
  EXPECT_EQ(r.at("nodes"), 2);  // nodeA and nodeB
  EXPECT_EQ(r.at("scope"), "cluster");
  EXPECT_TRUE(r.at("round").is_null());  // rounds belong to the pairs scope
  EXPECT_EQ(r.at("group"), 0);
  EXPECT_EQ(r.at("group_nodes"), Json::array({"nodeA", "nodeB"}));
  EXPECT_EQ(r.at("group_ranks"), Json::array({0, 1, 2, 3}));
  EXPECT_EQ(r.at("in_place"), true);
  EXPECT_EQ(r.at("cycle"), 2);
  EXPECT_EQ(r.at("check"), true);
  EXPECT_EQ(r.at("iterations"), 5);
  EXPECT_EQ(r.at("warmup_iterations"), 3);
  EXPECT_EQ(r.at("aggregation"), "mean");

  // Seconds and bytes per second, never µs or GB/s.
  const double time = (2e-3 + 3e-3 + 1e-3 + 4e-3) / 4;
  EXPECT_DOUBLE_EQ(r.at("time_s").get<double>(), time);
  EXPECT_DOUBLE_EQ(r.at("algbw_bytes_per_s").get<double>(), (1 << 20) / time);
  EXPECT_DOUBLE_EQ(r.at("bus_factor").get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(r.at("busbw_bytes_per_s").get<double>(), (1 << 20) / time * 1.5);
  EXPECT_EQ(r.at("timing"), "windows");  // the MPI backend times each call

  EXPECT_EQ(r.at("rank_time_s"),
            Json::array({2e-3, 3e-3, 1e-3, 4e-3}));  // aligned with group_ranks
  EXPECT_DOUBLE_EQ(r.at("rank_time").at("min_s").get<double>(), 1e-3);
  EXPECT_DOUBLE_EQ(r.at("rank_time").at("median_s").get<double>(), 2.5e-3);
  EXPECT_DOUBLE_EQ(r.at("rank_time").at("max_s").get<double>(), 4e-3);

  const Json& straggler = r.at("straggler");
  EXPECT_EQ(straggler.at("rank"), 2);
  EXPECT_EQ(straggler.at("host"), "nodeB");  // the rank's node, not the writer's
  EXPECT_DOUBLE_EQ(straggler.at("time_s").get<double>(), 1e-3);
  EXPECT_DOUBLE_EQ(straggler.at("lead_s").get<double>(), 1.5e-3);

  const Json& iterations = r.at("iteration_time");
  EXPECT_EQ(iterations.at("count"), 5);
  EXPECT_DOUBLE_EQ(iterations.at("min_s").get<double>(), 1e-3);
  EXPECT_DOUBLE_EQ(iterations.at("p50_s").get<double>(), 3e-3);
  EXPECT_DOUBLE_EQ(iterations.at("p99_s").get<double>(), 5e-3);
  EXPECT_DOUBLE_EQ(iterations.at("max_s").get<double>(), 5e-3);
  EXPECT_DOUBLE_EQ(iterations.at("mean_s").get<double>(), 3e-3);
  EXPECT_GT(iterations.at("cv").get<double>(), 0);

  EXPECT_EQ(r.at("wrong_elements"), 0);
  EXPECT_EQ(r.at("wrong_ranks"), Json::array());
  EXPECT_TRUE(r.at("adaptive").is_null());
}

TEST(CollectiveRecord, BackToBackTimeIsTheFigureAndSaysSo) {
  // NCCL batches run back to back: time_s and the bandwidths are nccl-tests' figure, while the
  // rank times and the straggler stay each operation's own window.
  const auto ranks = rank_map();
  Measurement m = allreduce_measurement();
  const double spans[] = {5e-3, 5e-3, 6e-3, 4e-3};
  for (int r = 0; r < 4; ++r)
    m.ranks[static_cast<std::size_t>(r)].back_to_back_seconds = spans[r];
  const Json r = collective_record(context_for(ranks), m);
  EXPECT_EQ(r.at("timing"), "back_to_back");
  EXPECT_DOUBLE_EQ(r.at("time_s").get<double>(), 5e-3);
  EXPECT_DOUBLE_EQ(r.at("busbw_bytes_per_s").get<double>(), (1 << 20) / 5e-3 * 1.5);
  EXPECT_EQ(r.at("rank_time_s"), Json::array({2e-3, 3e-3, 1e-3, 4e-3}));
  EXPECT_EQ(r.at("straggler").at("rank"), 2);
  const Json timing =
      schema().at("$defs").at("collective_measurement").at("properties").at("timing");
  EXPECT_EQ(timing.at("enum"), Json::array({"back_to_back", "windows"}));
}

TEST(CollectiveRecord, IterationSamplesAreWrittenInOrderAndThinnedEvenlyPastTheCap) {
  // `compare` tests with the samples themselves when a record has them.
  const auto ranks = rank_map();
  Measurement m = allreduce_measurement();
  Json r = collective_record(context_for(ranks), m);
  EXPECT_EQ(r.at("iteration_time").at("samples_s"), Json::array({4e-3, 2e-3, 3e-3, 5e-3, 1e-3}));
  // 1000 samples are kept whole; 1001 keep every second one (501), the first included.
  for (const std::size_t count : {std::size_t{1000}, std::size_t{1001}}) {
    m.iteration_seconds.assign(count, 1e-3);
    for (std::size_t i = 0; i < count; ++i)
      m.iteration_seconds[i] = 1e-3 + 1e-9 * static_cast<double>(i);
    r = collective_record(context_for(ranks), m);
    const Json& samples = r.at("iteration_time").at("samples_s");
    EXPECT_EQ(samples.size(), count == 1000 ? 1000U : 501U) << count;
    EXPECT_DOUBLE_EQ(samples.front().get<double>(), 1e-3) << count;
    EXPECT_EQ(r.at("iteration_time").at("count"), count);
  }
}

TEST(CollectiveRecord, RootedCollectivesRecordTheRootAndNoReduction) {
  const auto ranks = rank_map();
  Measurement m = allreduce_measurement();
  m.collective = CollectiveKind::kBroadcast;
  m.op.reset();
  m.root = 3;
  const Json r = collective_record(context_for(ranks), m);
  EXPECT_EQ(r.at("collective"), "broadcast");
  EXPECT_TRUE(r.at("redop").is_null());
  EXPECT_EQ(r.at("root"), 3);
  EXPECT_DOUBLE_EQ(r.at("bus_factor").get<double>(), 1.0);
}

TEST(CollectiveRecord, WrongElementsMakeAFailNamingRanksAndNodes) {
  const auto ranks = rank_map();
  Measurement m = allreduce_measurement();
  m.ranks[3].wrong_elements = 17;
  m.ranks[3].wrong_iterations = 2;
  m.ranks[1].wrong_elements = 4;
  m.ranks[1].wrong_iterations = 1;
  const Json r = collective_record(context_for(ranks), m);
  expect_common_fields(r, "fail");
  EXPECT_EQ(r.at("wrong_elements"), 21);
  ASSERT_EQ(r.at("wrong_ranks").size(), 2u);
  EXPECT_EQ(r.at("wrong_ranks")[0],
            (Json{{"rank", 1}, {"host", "nodeA"}, {"wrong_elements", 4}, {"wrong_iterations", 1}}));
  EXPECT_EQ(
      r.at("wrong_ranks")[1],
      (Json{{"rank", 3}, {"host", "nodeB"}, {"wrong_elements", 17}, {"wrong_iterations", 2}}));
  const std::string reason = r.at("reason");
  EXPECT_NE(reason.find("21 wrong elements"), std::string::npos) << reason;
  EXPECT_NE(reason.find("2 rank(s)"), std::string::npos) << reason;
  EXPECT_NE(reason.find("nodeA"), std::string::npos) << reason;
}

TEST(CollectiveRecord, UncheckedMeasurementHasNullWrongElements) {
  const auto ranks = rank_map();
  Measurement m = allreduce_measurement();
  for (auto& rank : m.ranks)
    rank.checked = false;
  m.check_requested = false;
  const Json r = collective_record(context_for(ranks), m);
  expect_common_fields(r, "ok");
  EXPECT_EQ(r.at("check"), false);
  EXPECT_TRUE(r.at("wrong_elements").is_null());  // missing evidence is null, never 0
  EXPECT_EQ(r.at("wrong_ranks"), Json::array());
}

TEST(CollectiveRecord, UnsupportedPlacementIsSkippedWithOnlyIdentifyingFields) {
  const auto ranks = rank_map();
  Measurement m = allreduce_measurement();
  m.collective = CollectiveKind::kSendRecv;
  m.op.reset();
  m.unsupported = "in-place sendrecv has no MPI form";
  m.ranks.clear();
  m.iteration_seconds.clear();
  const Json r = collective_record(context_for(ranks), m);
  expect_common_fields(r, "skipped");
  expect_has_fields(r, required_of(schema().at("$defs").at("collective_identity")), "identity");
  EXPECT_EQ(r.at("reason"), "in-place sendrecv has no MPI form");
  for (const auto& field : required_of(schema().at("$defs").at("collective_measurement"))) {
    EXPECT_FALSE(r.contains(field)) << field << " must be absent from a skipped record";
  }
}

TEST(CollectiveRecord, AdaptiveOutcome) {
  const auto ranks = rank_map();
  Measurement m = allreduce_measurement();
  m.adaptive = AdaptiveOutcome{2.0, 1.4, "ci"};
  Json r = collective_record(context_for(ranks), m);
  EXPECT_EQ(r.at("adaptive"),
            (Json{{"target_ci_pct", 2.0}, {"achieved_ci_pct", 1.4}, {"stopped_by", "ci"}}));
  m.adaptive = AdaptiveOutcome{2.0, std::nullopt, "budget"};
  r = collective_record(context_for(ranks), m);
  EXPECT_TRUE(r.at("adaptive").at("achieved_ci_pct").is_null());
  EXPECT_EQ(r.at("adaptive").at("stopped_by"), "budget");
}

TEST(CollectiveRecord, AggregationNames) {
  EXPECT_EQ(name_of(RankAggregation::kRankZero), "rank0");
  EXPECT_EQ(name_of(RankAggregation::kMean), "mean");
  EXPECT_EQ(name_of(RankAggregation::kMin), "min");
  EXPECT_EQ(name_of(RankAggregation::kMax), "max");
  const auto ranks = rank_map();
  auto context = context_for(ranks);
  context.aggregation = RankAggregation::kMax;
  const Json r = collective_record(context, allreduce_measurement());
  EXPECT_EQ(r.at("aggregation"), "max");
  EXPECT_DOUBLE_EQ(r.at("time_s").get<double>(), 4e-3);  // the slowest rank's time
}

TimeoutReport report_with(std::vector<int> culprits, bool attributed = true) {
  TimeoutReport report;
  report.context = "allreduce float sum 64 KiB out-of-place";
  report.timeout_seconds = 30;
  for (int r = 0; r < 4; ++r) {
    RankTimeoutState s;
    s.rank = r;
    s.responded = r != 3;
    s.operations_begun = r == 2 ? 11 : 12;
    s.inside_operation = r != 2;
    report.ranks.push_back(s);
  }
  report.culprit_ranks = std::move(culprits);
  report.attributed = attributed;
  report.this_process_reports = true;
  return report;
}

TEST(DescribeTimeout, NamesTheRanksThatDidNotArrive) {
  const auto ranks = rank_map();
  EXPECT_EQ(describe_timeout(report_with({2}), ranks),
            "rank 2 (nodeB) did not arrive at allreduce float sum 64 KiB out-of-place within 30 s");
  EXPECT_EQ(describe_timeout(report_with({1, 3}), ranks),
            "ranks 1 (nodeA), 3 (nodeB) did not arrive at allreduce float sum 64 KiB "
            "out-of-place within 30 s");
}

TEST(DescribeTimeout, EveryRankInsideSuspectsTheInterconnect) {
  EXPECT_EQ(describe_timeout(report_with({}), rank_map()),
            "allreduce float sum 64 KiB out-of-place did not complete within 30 s; every rank "
            "arrived and is waiting inside it (suspect the interconnect, not a rank)");
}

TEST(DescribeTimeout, UnattributedSaysPeersCouldNotBeAsked) {
  EXPECT_EQ(describe_timeout(report_with({}, false), rank_map()),
            "allreduce float sum 64 KiB out-of-place did not complete within 30 s (peers could "
            "not be asked: MPI without MPI_THREAD_MULTIPLE)");
}

TEST(DescribeTimeout, FractionalTimeoutAndUnknownRanks) {
  TimeoutReport report = report_with({7});
  report.timeout_seconds = 0.5;
  EXPECT_EQ(describe_timeout(report, rank_map()),
            "rank 7 (unknown) did not arrive at allreduce float sum 64 KiB out-of-place within "
            "0.5 s");
}

TEST(TimeoutRecord, HasTheDocumentedFields) {
  const auto ranks = rank_map();
  const TimeoutReport report = report_with({2, 3});
  const Json r = timeout_record(context_for(ranks), report);
  expect_common_fields(r, "timeout");
  // The fields the schema requires of a timeout record.
  const Json documented = schema();
  for (const auto& clause : documented.at("allOf")) {
    const Json& when = clause.at("if").at("properties");
    if (when.contains("status") && when.at("status").contains("const") &&
        when.at("status").at("const") == "timeout") {
      expect_has_fields(r, required_of(clause.at("then")), "timeout");
    }
  }
  EXPECT_EQ(r.at("operation"), "allreduce float sum 64 KiB out-of-place");
  EXPECT_DOUBLE_EQ(r.at("timeout_s").get<double>(), 30.0);
  EXPECT_EQ(r.at("nranks"), 4);
  EXPECT_EQ(
      r.at("not_arrived"),
      (Json::array({Json{{"rank", 2}, {"host", "nodeB"}}, Json{{"rank", 3}, {"host", "nodeB"}}})));
  EXPECT_EQ(r.at("attributed"), true);
  ASSERT_EQ(r.at("rank_states").size(), 4u);
  EXPECT_EQ(r.at("rank_states")[2], (Json{{"rank", 2},
                                          {"host", "nodeB"},
                                          {"responded", true},
                                          {"operations_begun", 11},
                                          {"inside_operation", false},
                                          {"idle_s", 0.0}}));
  EXPECT_EQ(r.at("rank_states")[3].at("responded"), false);
  EXPECT_EQ(r.at("reason"), describe_timeout(report, ranks));
}

TEST(TimeoutRecord, UnattributedHasNoCulprits) {
  const auto ranks = rank_map();
  const Json r = timeout_record(context_for(ranks), report_with({}, false));
  EXPECT_EQ(r.at("attributed"), false);
  EXPECT_EQ(r.at("not_arrived"), Json::array());
}

}  // namespace
}  // namespace commcert
