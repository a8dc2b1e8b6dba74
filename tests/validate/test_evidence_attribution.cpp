// Who a record speaks for, as the evidence model works it out once every file is read
// (validate/evidence.hpp): a measurement's participants and communicator, a run's nodes when no
// run record lists them, and the nodes each file holds evidence about (what lost or unfinished
// input holds back). Every rule reads these; a slip here certifies or blames the wrong node
// whatever the rules do.

#include <algorithm>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support.hpp"
#include "validate/record_reader.hpp"

namespace commcert {
namespace {

using fixtures::collective;
using fixtures::run_record;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

// Evidence from several files, read in this order (file i is Evidence::files[i]).
Evidence evidence_of_files(const std::vector<std::vector<Json>>& files) {
  fixtures::TempDir dir;
  Evidence evidence;
  RecordReader reader(evidence);
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::string text;
    for (const auto& record : files[i])
      text += record.dump() + "\n";
    reader.read_file(dir.write("records" + std::to_string(i) + ".jsonl", text));
  }
  evidence.finish();
  return evidence;
}

std::vector<std::string> names(const Evidence& evidence, std::span<const NodeId> ids) {
  std::vector<std::string> out;
  for (const NodeId id : ids)
    out.push_back(evidence.node_name(id));
  std::sort(out.begin(), out.end());
  return out;
}

const RunEvidence& run_named(const Evidence& evidence, const std::string& run_id) {
  for (const auto& run : evidence.runs) {
    if (evidence.text(run.run_id) == run_id) return run;
  }
  throw std::runtime_error("no run " + run_id);
}

// A record that ran nothing (status skipped), as a sweep writes one for a collective it could
// not run; without `group_nodes` it names only its writer.
Json skipped_collective(const std::string& scope, const std::string& host,
                        const std::string& run = "run1") {
  Json c = collective(kGiB, 1, scope, host, {}, run);
  c["status"] = "skipped";
  c["reason"] = "not run on " + host;
  c.erase("group_nodes");
  return c;
}

Json with_group(Json record, const std::vector<std::string>& group) {
  record["group_nodes"] = group;
  return record;
}

Json with_straggler(Json record, const std::string& host) {
  record["straggler"]["host"] = host;
  return record;
}

// A collective that timed out, written by `writer`, with the watchdog's state of these hosts
// (none when it could not gather them).
Json collective_timeout(const std::string& writer, const std::vector<std::string>& states,
                        const std::string& run = "run1") {
  Json t = fixtures::record("collective", writer, "timeout", -1, run);
  t["backend"] = "mpi";
  t["scope"] = "cluster";
  t["operation"] = "allreduce float sum 1 GiB out-of-place";
  t["timeout_s"] = 30;
  t["nranks"] = 4;
  t["not_arrived"] = Json::array();
  t["attributed"] = false;
  Json rank_states = Json::array();
  for (std::size_t i = 0; i < states.size(); ++i)
    rank_states.push_back({{"rank", i}, {"host", states[i]}});
  t["rank_states"] = std::move(rank_states);
  return t;
}

Json collective_error(const std::string& host, const std::string& run = "run1") {
  Json e = fixtures::record("collective", host, "error", -1, run);
  e["reason"] = "communicator init failed on " + host;
  return e;
}

// --- Participants and communicators ----------------------------------------------------------

TEST(EvidenceAttribution, ANodeScopeRecordWithoutItsGroupSpeaksForItsWriterAlone) {
  const Evidence evidence =
      fixtures::evidence_of({run_record({"n0", "n1", "n2"}), skipped_collective("node", "n1")});
  ASSERT_EQ(evidence.collectives.size(), 1u);
  EXPECT_THAT(names(evidence, evidence.participants(evidence.collectives[0])), ElementsAre("n1"));
}

// Every scope but `node` speaks, without a group, for the nodes of its run.
TEST(EvidenceAttribution, OtherScopesWithoutAGroupSpeakForTheirRun) {
  for (const char* scope : {"cluster", "pairs", "groups", "rail"}) {
    SCOPED_TRACE(scope);
    const Evidence evidence =
        fixtures::evidence_of({run_record({"n0", "n1", "n2"}), skipped_collective(scope, "n1")});
    ASSERT_EQ(evidence.collectives.size(), 1u);
    EXPECT_THAT(names(evidence, evidence.participants(evidence.collectives[0])),
                ElementsAre("n0", "n1", "n2"));
  }
}

TEST(EvidenceAttribution, AGroupIsItsDistinctNodesWhateverTheOrderTheRecordNamesThem) {
  const Evidence evidence =
      fixtures::evidence_of({run_record({"n0", "n1", "n2"}),
                             with_group(collective(kGiB, 100, "groups", "n0"), {"n2", "n0", "n2"}),
                             with_group(collective(kGiB, 100, "groups", "n0"), {"n0", "n2"})});
  ASSERT_EQ(evidence.collectives.size(), 2u);
  const auto& first = evidence.collectives[0];
  const auto& second = evidence.collectives[1];
  const auto members = evidence.participants(first);
  EXPECT_THAT(names(evidence, members), ElementsAre("n0", "n2"));
  EXPECT_TRUE(std::is_sorted(members.begin(), members.end()));
  EXPECT_EQ(first.group, second.group);
  EXPECT_EQ(Evidence::communicator(first), Evidence::communicator(second));
}

// Records measured in different communicators never share one: node n's own communicator, a
// group's and the run's stay apart even where a node's id and a group's index are the same
// number, and so do the communicators of eight nodes' node-scope records.
TEST(EvidenceAttribution, CommunicatorsOfGroupsNodesAndTheRunStayApart) {
  std::vector<Json> records = {run_record({"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"}),
                               with_group(collective(kGiB, 100, "cluster", "n0"), {"n0"}),
                               skipped_collective("cluster", "n0")};
  for (int n = 0; n < 8; ++n)
    records.push_back(skipped_collective("node", "n" + std::to_string(n)));
  const Evidence evidence = fixtures::evidence_of(records);
  ASSERT_EQ(evidence.collectives.size(), 10u);
  const auto& group_record = evidence.collectives[0];
  ASSERT_EQ(group_record.group, 0u);
  ASSERT_EQ(group_record.writer, evidence.collectives[2].writer);  // both n0, id 0
  ASSERT_EQ(group_record.writer, 0u);
  std::vector<std::uint64_t> communicators;
  for (const auto& c : evidence.collectives)
    communicators.push_back(Evidence::communicator(c));
  std::vector<std::uint64_t> distinct = communicators;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  EXPECT_EQ(distinct.size(), communicators.size());
}

// Without a group, every record of a scope other than `node` was measured in its run's one
// communicator, whoever wrote it.
TEST(EvidenceAttribution, RecordsWithoutAGroupShareTheirRunsCommunicator) {
  for (const char* scope : {"cluster", "pairs", "groups", "rail"}) {
    SCOPED_TRACE(scope);
    const Evidence evidence =
        fixtures::evidence_of({run_record({"n0", "n1"}), skipped_collective(scope, "n0"),
                               skipped_collective(scope, "n1")});
    ASSERT_EQ(evidence.collectives.size(), 2u);
    EXPECT_EQ(Evidence::communicator(evidence.collectives[0]),
              Evidence::communicator(evidence.collectives[1]));
  }
}

// --- A run without its run record -------------------------------------------------------------

// Its nodes are the ones its records show took part: writers of its measurements (of a pair's
// too, written by a node outside the pair), their stragglers and wrong ranks, group members, the
// writer and rank states of a timeout, the writer of an error. A node-scope record's writer
// measured other nodes, so it alone shows nothing.
TEST(EvidenceAttribution, ARunWithoutItsRunRecordIsTheNodesItsRecordsShow) {
  const Evidence evidence = fixtures::evidence_of({
      with_straggler(collective(kGiB, 100, "cluster", "a0"), "a1"),
      collective(kGiB, 100, "cluster", "a2", {{3, "a3"}}),
      with_straggler(collective(kGiB, 100, "cluster", "a4"), "a4"),
      with_group(collective(kGiB, 100, "node", "w0"), {"g0"}),
      with_group(collective(kGiB, 100, "pairs", "w1"), {"g1", "g2"}),
      collective_timeout("t0", {}),
      collective_timeout("t1", {"t1", "t2", "t3"}),
      collective_error("e0"),
  });
  EXPECT_THAT(names(evidence, run_named(evidence, "run1").nodes),
              ElementsAre("a0", "a1", "a2", "a3", "a4", "e0", "g0", "g1", "g2", "t0", "t1", "t2",
                          "t3", "w1"));
}

TEST(EvidenceAttribution, ARecordWithoutAStragglerAddsNoNamelessNode) {
  Json plain = collective(kGiB, 100, "cluster", "a0");
  plain["straggler"] = nullptr;
  const Evidence evidence = fixtures::evidence_of({plain});
  EXPECT_THAT(names(evidence, run_named(evidence, "run1").nodes), ElementsAre("a0"));
}

// Each timeout adds its own nodes, not just the first one read.
TEST(EvidenceAttribution, EveryTimeoutOfARunAddsItsNodes) {
  const Evidence evidence = fixtures::evidence_of(
      {collective_timeout("t0", {"t0", "t1"}), collective_timeout("t2", {"t2", "t3"})});
  EXPECT_THAT(names(evidence, run_named(evidence, "run1").nodes),
              ElementsAre("t0", "t1", "t2", "t3"));
}

// Each record adds its nodes: a straggler or wrong rank of one record does not end the search.
TEST(EvidenceAttribution, EveryMeasurementOfARunAddsItsNodes) {
  const Evidence evidence =
      fixtures::evidence_of({with_straggler(collective(kGiB, 100, "cluster", "a0"), "a1"),
                             collective(kGiB, 100, "cluster", "a2", {{3, "a3"}}),
                             collective(kGiB, 100, "cluster", "a4", {{5, "a5"}})});
  EXPECT_THAT(names(evidence, run_named(evidence, "run1").nodes),
              ElementsAre("a0", "a1", "a2", "a3", "a4", "a5"));
}

// A rank map decides, whatever the records name.
TEST(EvidenceAttribution, ARunRecordsRankMapIsTheRunsNodes) {
  const Evidence evidence = fixtures::evidence_of(
      {run_record({"n1", "n0", "n1"}), with_straggler(collective(kGiB, 100, "cluster", "n0"), "x9"),
       collective_timeout("n0", {"x8"})});
  EXPECT_THAT(names(evidence, run_named(evidence, "run1").nodes), ElementsAre("n0", "n1"));
}

// --- The nodes each file holds evidence about -------------------------------------------------

// A file holding only a run record is about the nodes of its rank map; one holding the run's
// measurements, timeouts or errors is about the nodes they speak for: the whole run for a
// record of any scope but `node` without a group, or a timeout; the group for a group's record;
// the writer alone for a node-scope record without a group; the node of an error.
TEST(EvidenceAttribution, EachFileIsAboutTheNodesItsRecordsSpeakFor) {
  const Evidence evidence = evidence_of_files({
      {run_record({"n0", "n1", "n2"})},
      {with_group(collective(kGiB, 100, "groups", "n0"), {"n0", "n2"})},
      {skipped_collective("cluster", "n0")},
      {skipped_collective("node", "n1")},
      {skipped_collective("pairs", "n1")},
      {collective_timeout("n2", {})},
      {collective_error("n1")},
      {fixtures::link("n0", "n2", 20), fixtures::link("n1", "n0", 20)},
  });
  ASSERT_EQ(evidence.file_nodes.size(), 8u);
  EXPECT_THAT(names(evidence, evidence.file_nodes[0]), ElementsAre("n0", "n1", "n2"));
  EXPECT_THAT(names(evidence, evidence.file_nodes[1]), ElementsAre("n0", "n2"));
  EXPECT_THAT(names(evidence, evidence.file_nodes[2]), ElementsAre("n0", "n1", "n2"));
  EXPECT_THAT(names(evidence, evidence.file_nodes[3]), ElementsAre("n1"));
  EXPECT_THAT(names(evidence, evidence.file_nodes[4]), ElementsAre("n0", "n1", "n2"));
  EXPECT_THAT(names(evidence, evidence.file_nodes[5]), ElementsAre("n0", "n1", "n2"));
  EXPECT_THAT(names(evidence, evidence.file_nodes[6]), ElementsAre("n1"));
  EXPECT_THAT(names(evidence, evidence.file_nodes[7]), ElementsAre("n0", "n1", "n2"));
}

// A link record about one node (it measured nothing) names no second node.
TEST(EvidenceAttribution, ALinkRecordAboutOneNodeIsAboutThatNodeAlone) {
  Json lonely = fixtures::record("link", "n0", "skipped");
  lonely["nodes"] = Json::array({"n0"});
  lonely["reason"] = "no RDMA device";
  const Evidence evidence = fixtures::evidence_of({lonely});
  ASSERT_EQ(evidence.file_nodes.size(), 1u);
  EXPECT_THAT(names(evidence, evidence.file_nodes[0]), ElementsAre("n0"));
}

// A rank map that gives one rank twice leaves another rank without a node: it is refused as
// unreadable, naming the rank, and the run falls back to the nodes its records show (never a
// nameless one).
TEST(EvidenceAttribution, ARankMapWithARankGivenTwiceIsRefused) {
  Json run = run_record({"n0", "n1"});
  run["ranks"][1]["rank"] = 0;
  const Evidence evidence = fixtures::evidence_of({run, collective(kGiB, 100, "cluster", "n1")});
  ASSERT_EQ(evidence.issues.size(), 1u);
  EXPECT_EQ(evidence.issues[0].code, "input.unparsable");
  EXPECT_THAT(evidence.issues[0].detail, ::testing::HasSubstr("ranks[].rank: rank 0 given twice"));
  EXPECT_EQ(evidence.issues[0].ref.line, 1u);
  const RunEvidence& only_run = run_named(evidence, "run1");
  EXPECT_FALSE(only_run.has_rank_map);
  EXPECT_THAT(names(evidence, only_run.nodes), ElementsAre("n1"));
  EXPECT_THAT(names(evidence, evidence.file_nodes[0]), ElementsAre("n1"));
  const FleetVerdict verdict = fixtures::certify(evidence, fixtures::cluster_floor_baseline());
  EXPECT_EQ(fixtures::node(verdict, "n1").state, NodeState::kInconclusive);
}

// A rank beyond the map's own length (its size is the limit) leaves a rank without a node too:
// refused the same way, naming the field; the last rank of the map, one below, is read.
TEST(EvidenceAttribution, ARankMapWithARankBeyondItsLengthIsRefused) {
  for (const int beyond : {2, 3}) {
    SCOPED_TRACE(beyond);
    Json run = run_record({"n0", "n1"});
    run["ranks"][1]["rank"] = beyond;
    const Evidence evidence = fixtures::evidence_of({run});
    ASSERT_EQ(evidence.issues.size(), 1u);
    EXPECT_EQ(evidence.issues[0].code, "input.unparsable");
    EXPECT_THAT(evidence.issues[0].detail, ::testing::HasSubstr("ranks[].rank: gap"));
  }
  const Evidence last = fixtures::evidence_of({run_record({"n0", "n1"})});
  EXPECT_TRUE(last.issues.empty());
  EXPECT_THAT(names(last, run_named(last, "run1").nodes), ElementsAre("n0", "n1"));
}

}  // namespace
}  // namespace commcert
