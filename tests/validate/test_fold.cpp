#include <gtest/gtest.h>

#include "support.hpp"
#include "validate/fold.hpp"

namespace commcert {
namespace {

class FoldTest : public ::testing::Test {
 protected:
  FoldTest() {
    evidence_.files.push_back({"records.jsonl"});
    for (const char* name : {"node10", "node2", "node1"})
      nodes_.push_back(evidence_.nodes.intern(name));
  }

  Finding finding(const std::string& node, ReasonCode code, const std::string& check) {
    Finding f;
    f.code = code;
    f.node = *evidence_.nodes.find(node);
    f.check = check;
    f.rule = "rule.test";
    f.fields = {{"where", ""}, {"check", check}, {"detail", ""}};
    f.evidence.push_back({0, 7});
    return f;
  }

  std::vector<NodeVerdict> fold_(std::vector<Finding> findings) {
    return fold(evidence_, std::move(findings), nodes_, required_);
  }

  Evidence evidence_;
  std::vector<NodeId> nodes_;
  std::vector<std::string> required_ = {"burn", "collective.allreduce"};
};

TEST_F(FoldTest, EveryNodeGetsAVerdictInNaturalOrder) {
  const auto v = fold_({});
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].node, "node1");
  EXPECT_EQ(v[1].node, "node2");
  EXPECT_EQ(v[2].node, "node10");
  for (const auto& n : v) {
    EXPECT_EQ(n.state, NodeState::kCertified);
    EXPECT_EQ(n.severity, Severity::kNone);
    EXPECT_EQ(n.first_reason(), nullptr);
    EXPECT_EQ(n.checks, (std::vector<std::pair<std::string, std::string>>{
                            {"burn", "pass"}, {"collective.allreduce", "pass"}}));
  }
}

TEST_F(FoldTest, QuarantineDominatesInconclusiveWhichDominatesWarnings) {
  const auto v = fold_({finding("node1", "health.throttle", "health.gpu"),
                        finding("node1", "evidence.missing", "burn"),
                        finding("node1", "health.ecc_uncorrectable", "health.gpu"),
                        finding("node1", "burn.miscompare", "burn"),
                        finding("node2", "health.throttle", "health.gpu"),
                        finding("node2", "evidence.missing", "collective.allreduce"),
                        finding("node10", "health.throttle", "health.gpu")});
  const auto& n1 = v[0];
  EXPECT_EQ(n1.state, NodeState::kQuarantined);
  EXPECT_EQ(n1.severity, Severity::kIsolate);  // the worst: miscompare (isolate) over ECC (reset)
  EXPECT_EQ(n1.first_reason()->code, "burn.miscompare");
  EXPECT_EQ(n1.reasons.back().code, "health.throttle");  // warnings last
  EXPECT_EQ(n1.first_reason()->evidence.at(0).file, "records.jsonl");
  EXPECT_EQ(n1.first_reason()->evidence.at(0).line, 7u);

  const auto& n2 = v[1];
  EXPECT_EQ(n2.state, NodeState::kInconclusive);
  EXPECT_EQ(n2.severity, Severity::kUnknown);
  EXPECT_EQ(n2.first_reason()->code, "evidence.missing");

  const auto& n10 = v[2];
  EXPECT_EQ(n10.state, NodeState::kCertified);
  EXPECT_EQ(n10.severity, Severity::kMonitor);
  EXPECT_EQ(n10.first_reason(), nullptr);
  EXPECT_EQ(n10.reasons.size(), 1u);
}

TEST_F(FoldTest, ChecksReportTheirWorstOutcome) {
  const auto v = fold_({finding("node1", "evidence.missing", "burn"),
                        finding("node1", "burn.miscompare", "burn"),
                        finding("node1", "health.throttle", "health.gpu")});
  EXPECT_EQ(v[0].checks,
            (std::vector<std::pair<std::string, std::string>>{
                {"burn", "fail"}, {"collective.allreduce", "pass"}, {"health.gpu", "warn"}}));
}

TEST(FleetVerdict, ExitStatusQuarantineWinsOverInconclusive) {
  FleetVerdict v;
  const auto add = [&v](NodeState state) {
    NodeVerdict n;
    n.state = state;
    v.nodes.push_back(n);
  };
  EXPECT_EQ(v.exit_status(), 0);
  add(NodeState::kCertified);
  EXPECT_EQ(v.exit_status(), 0);
  add(NodeState::kInconclusive);
  EXPECT_EQ(v.exit_status(), 3);
  add(NodeState::kQuarantined);
  EXPECT_EQ(v.exit_status(), 1);
}

TEST(NaturalLess, ComparesDigitRunsAsNumbers) {
  EXPECT_TRUE(natural_less("node2", "node10"));
  EXPECT_FALSE(natural_less("node10", "node2"));
  EXPECT_TRUE(natural_less("a9b", "a10a"));
  EXPECT_TRUE(natural_less("rack1-node7", "rack2-node1"));
  EXPECT_TRUE(natural_less("node", "node0"));
  EXPECT_NE(natural_less("node01", "node1"), natural_less("node1", "node01"));  // a strict order
  EXPECT_FALSE(natural_less("node3", "node3"));
}

}  // namespace
}  // namespace commcert
