// Golden tests of every verdict format. To accept a deliberate change of output, run the test
// with COMMCERT_UPDATE_GOLDEN=1 and review the diff of tests/fixtures/golden/.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "report/verdict_reporter.hpp"
#include "support.hpp"

namespace commcert {
namespace {

using ::testing::HasSubstr;

Reason make_reason(ReasonCode code, const std::string& check, const std::string& message) {
  const ReasonSpec& spec = reason_spec(code);
  Reason r;
  r.code = code.str();
  r.effect = spec.effect;
  r.severity = spec.severity;
  r.check = check;
  r.rule = "rule.test";
  r.message = message;
  r.action = std::string(spec.action);
  r.evidence.push_back({"results/run1/records.jsonl", 12});
  return r;
}

FleetVerdict sample_verdict() {
  FleetVerdict v;
  v.baseline_path = "suites/baselines/h100-sxm-8gpu-ndr400.yaml";
  v.sku = "h100-sxm-8gpu-ndr400";
  v.required = {"burn", "collective.allreduce"};
  v.inputs.push_back({"results/run1/records.jsonl", 120, 118, 1, 1, true});
  v.notes.push_back({"input.truncated", "results/run1/records.jsonl", 120, "unclosed object"});

  NodeVerdict ok;
  ok.node = "node1";
  ok.state = NodeState::kCertified;
  ok.severity = Severity::kNone;
  ok.checks = {{"burn", "pass"}, {"collective.allreduce", "pass"}};

  NodeVerdict warned = ok;
  warned.node = "node2";
  warned.severity = Severity::kMonitor;
  warned.reasons.push_back(
      make_reason("health.throttle", "health.gpu",
                  "gpu 1: clock events other than power capping: hw_slowdown"));
  warned.checks.emplace_back("health.gpu", "warn");

  NodeVerdict bad;
  bad.node = "node10";
  bad.state = NodeState::kQuarantined;
  bad.severity = Severity::kIsolate;
  Reason wrong = make_reason("collective.wrong_data", "collective.allreduce",
                             "allreduce: 512 wrong elements from rank 80 in 2 record(s), first at "
                             "1 GiB out-of-place (run run1)");
  wrong.measured = 512;
  wrong.limit = 0;
  wrong.unit = "elements";
  bad.reasons.push_back(wrong);
  Reason link = make_reason("health.nvlink_down", "health.gpu", "gpu 6 (GPU-6): NVLink 5 inactive");
  link.gpu_index = 6;
  link.gpu_uuid = "GPU-6";
  link.link = LinkRef{"nvlink", {}, 5, {}};
  bad.reasons.push_back(link);
  bad.checks = {{"burn", "pass"}, {"collective.allreduce", "fail"}, {"health.gpu", "fail"}};

  NodeVerdict missing;
  missing.node = "node11";
  missing.state = NodeState::kInconclusive;
  missing.severity = Severity::kUnknown;
  missing.reasons.push_back(
      make_reason("evidence.missing", "burn", "burn: no evidence for gpu 3 (of 8)"));
  missing.checks = {{"burn", "inconclusive"}, {"collective.allreduce", "pass"}};

  v.nodes = {ok, warned, bad, missing};
  v.fleet.push_back({"burn.tflops.gemm_bf16", "TFLOP/s", 32, 4, 731.5, 4.25, 700.1, 760.2});
  return v;
}

void expect_golden(const std::string& name, const std::string& actual) {
  const auto path = fixtures::source_path("tests/fixtures/golden/" + name);
  if (const char* update = std::getenv("COMMCERT_UPDATE_GOLDEN");
      update && std::string(update) == "1") {
    std::ofstream(path, std::ios::trunc) << actual;
  }
  EXPECT_EQ(actual, fixtures::read_text(path)) << "golden file " << path << " differs";
}

TEST(VerdictReporters, TextSummaryMatchesGolden) {
  expect_golden("verdict.txt", make_verdict_reporter("text")->render(sample_verdict()));
}

TEST(VerdictReporters, NhcLinesMatchGolden) {
  expect_golden("verdict.nhc", make_verdict_reporter("nhc")->render(sample_verdict()));
}

TEST(VerdictReporters, JsonMatchesGoldenApartFromTimeAndVersion) {
  Json json = Json::parse(make_verdict_reporter("json")->render(sample_verdict()));
  EXPECT_TRUE(json.contains("time"));
  EXPECT_TRUE(json["commcert"].contains("version"));
  json.erase("time");
  json.erase("commcert");
  expect_golden("verdict.json", json.dump(2) + "\n");
}

TEST(VerdictReporters, NodeLinesMatchGolden) {
  expect_golden("verdict.nodes", make_verdict_reporter("nodes")->render(sample_verdict()));
}

// Four fields per line whatever a record put in a node name, so awk's $2 is always the state.
TEST(VerdictReporters, NodeLinesKeepFourFieldsForAnyName) {
  FleetVerdict v = sample_verdict();
  v.nodes[2].node = "node 10\nnode11 certified";
  std::istringstream lines(make_verdict_reporter("nodes")->render(v));
  std::size_t count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    std::istringstream fields(line);
    std::vector<std::string> words;
    for (std::string w; fields >> w;)
      words.push_back(w);
    EXPECT_EQ(words.size(), 4u) << line;
  }
  EXPECT_EQ(count, v.nodes.size());
}

TEST(VerdictReporters, NhcSaysSuccessWhenAllAreCertified) {
  FleetVerdict v = sample_verdict();
  v.nodes.resize(2);
  EXPECT_EQ(make_verdict_reporter("nhc")->render(v),
            "SUCCESS: commcert: 2 node(s) certified against h100-sxm-8gpu-ndr400\n");
}

// A node name or message from an edited record may hold a newline or a terminal escape: the
// human formats show it escaped, one line per node; JSON keeps the exact bytes (JSON-escaped).
TEST(VerdictReporters, ControlCharactersInNamesAreEscapedInHumanFormats) {
  FleetVerdict v = sample_verdict();
  v.nodes[2].node = "node10\ncertified 99\x1b[2J";
  v.nodes[2].reasons[0].message = "wrong data\rfrom\trank 80";
  const std::string text = make_verdict_reporter("text")->render(v);
  EXPECT_THAT(text, HasSubstr("  node10\\ncertified 99\\x1b[2J  quarantined"));
  EXPECT_THAT(text, HasSubstr("wrong data\\rfrom\\trank 80"));
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_EQ(text.find('\r'), std::string::npos);
  // As many lines as with a plain name: the newline did not start a line of its own.
  const auto lines = [](const std::string& t) { return std::count(t.begin(), t.end(), '\n'); };
  EXPECT_EQ(lines(text), lines(make_verdict_reporter("text")->render(sample_verdict())));

  const std::string nhc = make_verdict_reporter("nhc")->render(v);
  EXPECT_THAT(nhc, HasSubstr("ERROR: commcert: node10\\ncertified 99\\x1b[2J: quarantined"));
  EXPECT_EQ(lines(nhc), lines(make_verdict_reporter("nhc")->render(sample_verdict())));
  EXPECT_EQ(nhc.find('\x1b'), std::string::npos);

  const Json json = Json::parse(make_verdict_reporter("json")->render(v));
  EXPECT_EQ(json["nodes"][2]["node"], "node10\ncertified 99\x1b[2J");
}

TEST(VerdictFormats, EveryRegisteredFormatRendersTheSampleVerdict) {
  ASSERT_FALSE(verdict_formats().empty());
  for (const VerdictFormat& format : verdict_formats()) {
    SCOPED_TRACE(std::string(format.name));
    EXPECT_FALSE(format.description.empty());
    const std::string text = format.make()->render(sample_verdict());
    // Every format names the quarantined node and ends its last line.
    EXPECT_THAT(text, HasSubstr("node10"));
    ASSERT_FALSE(text.empty());
    EXPECT_EQ(text.back(), '\n');
  }
}

TEST(VerdictFormats, NamesAreUniqueAndListedInTableOrder) {
  std::vector<std::string> names;
  std::string joined;
  for (const VerdictFormat& format : verdict_formats()) {
    EXPECT_EQ(std::count(names.begin(), names.end(), format.name), 0) << format.name;
    EXPECT_EQ(find_verdict_format(format.name), &format);
    names.emplace_back(format.name);
    joined += (joined.empty() ? "" : ", ") + std::string(format.name);
    EXPECT_THAT(verdict_format_help(),
                HasSubstr(fmt::format("{} ({})", format.name, format.description)));
  }
  EXPECT_EQ(verdict_format_names(), joined);
  // The formats scripts already call by name stay.
  for (const char* name : {"text", "json", "nhc"})
    EXPECT_NE(find_verdict_format(name), nullptr) << name;
}

TEST(VerdictFormats, UnknownNameIsAUsageErrorListingTheTable) {
  EXPECT_EQ(find_verdict_format("xml"), nullptr);
  EXPECT_EQ(find_verdict_format("TEXT"), nullptr);  // names are exact
  EXPECT_EQ(find_verdict_format(""), nullptr);
  try {
    (void)make_verdict_reporter("xml");
    ADD_FAILURE() << "xml was accepted";
  } catch (const UsageError& error) {
    EXPECT_EQ(std::string(error.what()),
              "unknown format 'xml' (known: " + verdict_format_names() + ")");
  }
}

// What `--apply slurm` (issue 5) reads: per node state, severity, first reason, all reasons.
TEST(VerdictJson, CarriesWhatPoolActionsNeed) {
  const Json json = to_json(sample_verdict());
  EXPECT_EQ(json["exit_status"], 1);
  EXPECT_EQ(json["summary"]["quarantined"], 1);
  const Json& bad = json["nodes"][2];
  EXPECT_EQ(bad["node"], "node10");
  EXPECT_EQ(bad["state"], "quarantined");
  EXPECT_EQ(bad["severity"], "isolate");
  EXPECT_EQ(bad["first_reason"]["code"], "collective.wrong_data");
  EXPECT_EQ(bad["reasons"].size(), 2u);
  EXPECT_EQ(bad["reasons"][1]["link"]["link"], 5);
  EXPECT_EQ(bad["reasons"][1]["gpu"]["uuid"], "GPU-6");
  EXPECT_TRUE(json["nodes"][0]["first_reason"].is_null());
}

}  // namespace
}  // namespace commcert
