// The report formats (html, md, junit, prom) over a report model with run details, and the model
// built from committed records. The browser, promtool and the JUnit schema check the same
// formats on a real run in tests/integration/test_report.py.
#include <algorithm>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/printable.hpp"
#include "report/markup.hpp"
#include "report/verdict_reporter.hpp"
#include "support.hpp"
#include "validate/inputs.hpp"
#include "validate/validator.hpp"

namespace commcert {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kHostile = "<img src=x onerror=alert(1)>";

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++count;
  return count;
}

Reason reason(const std::string& code, Effect effect, const std::string& check,
              const std::string& message) {
  Reason r;
  r.code = code;
  r.effect = effect;
  r.severity = effect == Effect::kQuarantine ? Severity::kIsolate : Severity::kUnknown;
  r.check = check;
  r.rule = "rule.test";
  r.message = message;
  r.action = "drain and test";
  r.measured = 12.5;
  r.limit = 40;
  r.unit = "GB/s";
  r.evidence.push_back({"results/r1/records.jsonl", 7});
  return r;
}

FleetVerdict verdict() {
  FleetVerdict v;
  v.baseline_path = "suites/baselines/cpu-mpi-ci.yaml";
  v.sku = "cpu-mpi-ci";
  v.suite_name = "ci";
  v.required = {"collective.allreduce", "health.node"};
  NodeVerdict good;
  good.node = "node0";
  good.state = NodeState::kCertified;
  good.severity = Severity::kNone;
  good.checks = {{"collective.allreduce", "pass"}, {"health.node", "pass"}};
  NodeVerdict bad;
  bad.node = kHostile;
  bad.state = NodeState::kQuarantined;
  bad.severity = Severity::kIsolate;
  bad.reasons.push_back(reason("perf.busbw_floor", Effect::kQuarantine, "collective.allreduce",
                               "allreduce busbw 12.5 GB/s | below \"40\""));
  bad.checks = {{"collective.allreduce", "fail"}, {"health.node", "pass"}};
  NodeVerdict missing;
  missing.node = "node2";
  missing.state = NodeState::kInconclusive;
  missing.severity = Severity::kUnknown;
  missing.reasons.push_back(
      reason("evidence.missing", Effect::kInconclusive, "health.node", "no health record"));
  missing.checks = {{"collective.allreduce", "pass"}, {"health.node", "inconclusive"}};
  v.nodes = {good, missing, bad};
  return v;
}

RunDetails details() {
  RunDetails run;
  CollectivePlot plot;
  plot.collective = "allreduce";
  plot.scope = "node";
  plot.judged_bytes = 1 << 20;
  for (const auto& [node, factor] : std::vector<std::pair<std::string, double>>{
           {"node0", 1.0}, {"node2", 0.95}, {kHostile, 0.2}}) {
    BusbwCurve curve;
    curve.label = node;
    curve.nodes = {node};
    curve.flagged = node == kHostile;
    curve.points = {{65536, 1e9 * factor}, {1 << 20, 4e9 * factor}};
    plot.curves.push_back(curve);
  }
  plot.band = {{65536, 0.6e9, 0.95e9, 1e9}, {1 << 20, 2.4e9, 3.8e9, 4e9}};
  run.collectives.push_back(plot);
  CollectivePlot gather = plot;
  gather.collective = "allgather";
  run.collectives.push_back(gather);
  run.judged = {{"node0", "allreduce", "node", 1 << 20, 4e9},
                {kHostile, "allreduce", "node", 1 << 20, 0.8e9}};
  PairMatrix matrix;
  matrix.collective = "allreduce";
  matrix.bytes = 1 << 20;
  matrix.limit_bytes_per_s = 2e9;
  matrix.nodes = {"node0", "node1", "node2", kHostile};
  for (std::size_t i = 0; i < matrix.nodes.size(); ++i) {
    for (std::size_t j = i + 1; j < matrix.nodes.size(); ++j) {
      const bool slow = matrix.nodes[j] == kHostile;
      matrix.cells.push_back({matrix.nodes[i], matrix.nodes[j], slow ? 0.5e9 : 3e9, !slow, false,
                              matrix.nodes[i] == "node0" && matrix.nodes[j] == "node1"});
    }
  }
  matrix.bad_nodes = {kHostile};
  run.pairs.push_back(matrix);
  BurnGpu burn;
  burn.node = "node0";
  burn.gpu = 3;
  burn.uuid = "GPU-\"quoted\"\\back";
  burn.kernel = "gemm_bf16";
  burn.status = "ok";
  burn.tflops = 707.5;
  burn.tflops_min = 700;
  burn.tflops_max = 711;
  burn.datasheet_peak_tflops = 989.4;
  run.burns.push_back(burn);
  MembwGpu membw;
  membw.node = "node0";
  membw.gpu = 3;
  membw.status = "ok";
  membw.read = 2.9e12;
  membw.copy = 2.6e12;
  membw.datasheet_peak = 3.35e12;
  run.membws.push_back(membw);
  RunDescription meta;
  meta.run_id = "r1";
  meta.environment = {{"NCCL_DEBUG", "</code><script>alert(2)</script>"}};
  meta.commands = {{"run", {"commcert", "run", "ci", "--node-name", "node{rank}"}, "ok"}};
  run.runs.push_back(meta);
  return run;
}

std::string render(std::string_view format, const RunDetails* run) {
  const FleetVerdict v = verdict();
  return make_verdict_reporter(format)->render(Report(v, run));
}

TEST(Markup, EscapesEverythingThatCouldBecomeMarkup) {
  EXPECT_EQ(escape_markup(kHostile), "&lt;img src=x onerror=alert(1)&gt;");
  EXPECT_EQ(escape_markup("a&b\"c'd"), "a&amp;b&quot;c&#39;d");
  EXPECT_EQ(escape_markup("line\nnext\ttab\x01"), "line&#10;next&#9;tab\\x01");
  EXPECT_EQ(escape_markup("node7"), "node7");
}

TEST(Printable, OneLineFormatsEscapeLineBreaksTerminalSequencesAndBidiOverrides) {
  // text, nhc and nodes lines: nothing may split them, rewrite a terminal, or reorder them.
  EXPECT_EQ(printable("a\nb\rc\td\x01\x1b[2J\x7f"), "a\\nb\\rc\\td\\x01\\x1b[2J\\x7f");
  EXPECT_EQ(printable("next\u0085csi\u009b"), "next\\u0085csi\\u009b");
  EXPECT_EQ(printable("a\u2028b\u2029c"), "a\\u2028b\\u2029c");
  EXPECT_EQ(printable("safe\u202etxt.exe \u2066x\u2069"), "safe\\u202etxt.exe \\u2066x\\u2069");
  // Other text, combining marks and an invalid or cut sequence included, stays as it is.
  EXPECT_EQ(printable("e\u0301 \u00e9 \u2014 \u2030 \u2060 C:\\n"),
            "e\u0301 \u00e9 \u2014 \u2030 \u2060 C:\\n");
  EXPECT_EQ(printable("\xe2\x80"), "\xe2\x80");
  EXPECT_EQ(printable("\xc2"), "\xc2");
}

TEST(HtmlReport, EveryRecordStringIsText) {
  const RunDetails run = details();
  const std::string html = render("html", &run);
  EXPECT_THAT(html, Not(HasSubstr("<img")));
  EXPECT_THAT(html, Not(HasSubstr("<script>alert")));
  EXPECT_THAT(html, HasSubstr("&lt;img src=x onerror=alert(1)&gt;"));
  // One script only, the filter, allowed by its hash; nothing may be fetched.
  EXPECT_EQ(occurrences(html, "<script"), 1U);
  EXPECT_THAT(html, HasSubstr("default-src 'none'"));
  EXPECT_THAT(html, Not(HasSubstr(" src=\"")));
  EXPECT_THAT(html, Not(HasSubstr("href=\"http")));
}

TEST(HtmlReport, ShowsVerdictRowsPlotsAndHeatmap) {
  const RunDetails run = details();
  const std::string html = render("html", &run);
  EXPECT_EQ(occurrences(html, "<tr class=\"node-row\""), 3U);
  EXPECT_THAT(html, HasSubstr("data-state=\"quarantined\""));
  // Every reason with its figures.
  EXPECT_THAT(html, HasSubstr("measured 12.5000 GB/s, limit 40.0000"));
  EXPECT_EQ(occurrences(html, "class=\"plot busbw\""), 2U);
  EXPECT_THAT(html, HasSubstr("data-collective=\"allgather\""));
  EXPECT_EQ(occurrences(html, "class=\"curve flagged\""), 4U);  // polyline and legend, per plot
  // 4 nodes: 12 off-diagonal cells; the bad node's 6 marked, the suspect link's 2.
  EXPECT_EQ(occurrences(html, "<td class=\"cell"), 12U);
  EXPECT_EQ(occurrences(html, "bad-node\" data-a"), 6U);
  EXPECT_EQ(occurrences(html, "suspect-link"), 3U);  // 2 cells and the style rule
  EXPECT_THAT(html, HasSubstr("class=\"plot burn\""));
  EXPECT_THAT(html, HasSubstr("class=\"plot membw\""));
  EXPECT_THAT(html, HasSubstr("commcert run ci --node-name node{rank}"));
}

TEST(HtmlReport, VerdictAloneStillRenders) {
  const std::string html = render("html", nullptr);
  EXPECT_EQ(occurrences(html, "<tr class=\"node-row\""), 3U);
  EXPECT_THAT(html, Not(HasSubstr("class=\"plot")));
}

TEST(JunitReport, QuarantineIsAFailureAndInconclusiveAnError) {
  const std::string xml = render("junit", nullptr);
  EXPECT_THAT(xml, HasSubstr("<testsuites name=\"commcert certify cpu-mpi-ci\" tests=\"6\" "
                             "failures=\"1\" errors=\"1\""));
  EXPECT_EQ(occurrences(xml, "<testsuite "), 3U);
  EXPECT_EQ(occurrences(xml, "<testcase "), 6U);
  EXPECT_THAT(xml, HasSubstr("<failure message=\"allreduce busbw 12.5 GB/s | below "
                             "&quot;40&quot;\" type=\"perf.busbw_floor\">"));
  EXPECT_THAT(xml, HasSubstr("<error message=\"no health record\" type=\"evidence.missing\">"));
  EXPECT_THAT(xml, HasSubstr("<testsuite name=\"&lt;img src=x onerror=alert(1)&gt;\""));
  EXPECT_THAT(xml, Not(HasSubstr("<img")));
}

TEST(PrometheusReport, NamesLabelsAndEscapes) {
  const RunDetails run = details();
  const std::string prom = render("prom", &run);
  EXPECT_THAT(prom, HasSubstr("commcert_node_state{node=\"node0\",state=\"certified\"} 1\n"));
  EXPECT_THAT(prom, HasSubstr("commcert_node_state{node=\"node0\",state=\"quarantined\"} 0\n"));
  EXPECT_THAT(prom, HasSubstr("commcert_nodes{state=\"inconclusive\"} 1\n"));
  EXPECT_THAT(prom, HasSubstr("commcert_node_checks{node=\"node2\",result=\"inconclusive\"} 1\n"));
  EXPECT_THAT(prom, HasSubstr("commcert_collective_busbw_bytes_per_second{node=\"node0\","
                              "collective=\"allreduce\",scope=\"node\"} 4000000000\n"));
  EXPECT_THAT(prom, HasSubstr("commcert_collective_judged_size_bytes{node=\"node0\","
                              "collective=\"allreduce\",scope=\"node\"} 1048576\n"));
  // Backslash and double quote escaped in label values.
  EXPECT_THAT(prom, HasSubstr("commcert_gpu_burn_flop_per_second{node=\"node0\",gpu=\"3\","
                              "uuid=\"GPU-\\\"quoted\\\"\\\\back\",kernel=\"gemm_bf16\"} "
                              "707500000000000\n"));
  EXPECT_THAT(prom, HasSubstr("measure=\"copy\"} 2600000000000\n"));
  // Every family has its HELP and TYPE before its samples.
  const std::regex sample(R"(^([a-z_]+)[{ ])");
  std::string current;
  std::istringstream lines(prom);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("# TYPE ")) {
      current = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_THAT(line, testing::EndsWith(" gauge"));
      continue;
    }
    if (line.starts_with("#")) continue;
    std::smatch match;
    ASSERT_TRUE(std::regex_search(line, match, sample)) << line;
    EXPECT_EQ(match[1], current) << line;
  }
}

TEST(PrometheusReport, LineFeedInALabelValueStaysOnOneLine) {
  FleetVerdict v = verdict();
  v.nodes[0].node = "node\n0";
  const std::string prom = make_verdict_reporter("prom")->render(Report(v));
  EXPECT_THAT(prom, HasSubstr("node=\"node\\n0\""));
}

// The verdict's notes (a missed --target-ci among them) are list items of their own, escaped as
// cells are; a verdict without notes has no such section.
TEST(MarkdownReport, TheVerdictsNotesAreListedEscaped) {
  EXPECT_THAT(render("md", nullptr), Not(HasSubstr("Notes on the input")));
  FleetVerdict v = verdict();
  v.notes.push_back({"measurement.target_ci_missed", "results/r1/records.jsonl", 7,
                     "run r1: allreduce did not reach its target CI of ±1% | <b>"});
  v.notes.push_back({"input.fault_injection", "results/r1/meta.json", 0, "planted"});
  const std::string md = make_verdict_reporter("md")->render(Report(v));
  EXPECT_THAT(md, HasSubstr("\n### Notes on the input\n\n- `measurement.target_ci_missed` "
                            "results/r1/records.jsonl:7: run r1: allreduce did not reach its "
                            "target CI of ±1% \\| &lt;b&gt;\n- `input.fault_injection` "
                            "results/r1/meta.json: planted\n"));
}

TEST(MarkdownReport, NodesToActOnWithEscapedCells) {
  const RunDetails run = details();
  const std::string md = render("md", &run);
  EXPECT_THAT(md, HasSubstr("| &lt;img src=x onerror=alert(1)&gt; | quarantined |"));
  // A | in a message cannot end the cell; a quote stays a quote.
  EXPECT_THAT(md, HasSubstr("perf.busbw\\_floor: allreduce busbw"));
  EXPECT_THAT(md, HasSubstr("12.5 GB/s \\| below \"40\""));
  EXPECT_THAT(md, HasSubstr("1 further nodes certified without remarks."));
  EXPECT_THAT(md, HasSubstr("- bad node: &lt;img src=x onerror=alert(1)&gt;"));
  EXPECT_THAT(md, HasSubstr("- suspect link: node0 – node1 at 3.00 GB/s"));
}

// The cells of one Markdown table line as a GFM renderer splits them: a backslash escapes the
// next character, an unescaped | ends a cell. nullopt when the line is not a table row.
std::optional<std::vector<std::string>> table_cells(const std::string& line) {
  if (line.size() < 2 || line.front() != '|' || line.back() != '|') return std::nullopt;
  std::vector<std::string> cells;
  std::string current;
  for (std::size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size()) {
      current += line.substr(i, 2);
      ++i;
    } else if (line[i] == '|') {
      cells.push_back(current);
      current.clear();
    } else {
      current += line[i];
    }
  }
  return cells;
}

// The report's tables as (rows, columns): lines starting with | that follow each other are one
// table, and each of its rows must have the header's number of cells. No line holds a CR.
std::vector<std::pair<std::size_t, std::size_t>> tables(const std::string& md) {
  std::vector<std::pair<std::size_t, std::size_t>> found;
  std::istringstream lines(md);
  bool in_table = false;
  for (std::string line; std::getline(lines, line);) {
    EXPECT_EQ(line.find('\r'), std::string::npos) << line;
    if (line.empty() || line.front() != '|') {
      in_table = false;
      continue;
    }
    const auto cells = table_cells(line);
    if (!cells) {
      ADD_FAILURE() << "a table line cut short: " << line;
      continue;
    }
    if (!in_table) found.emplace_back(0, cells->size());
    in_table = true;
    ++found.back().first;
    EXPECT_EQ(cells->size(), found.back().second) << line;
  }
  return found;
}

TEST(MarkdownEscape, OnlyWhatMarkdownReadsIsEscapedAndQuotesStayQuotes) {
  EXPECT_EQ(escape_markdown("say \"no\" and 'yes'"), "say \"no\" and 'yes'");
  EXPECT_EQ(escape_markdown("a|b"), "a\\|b");
  // A backslash before a | cannot swallow the | 's escape.
  EXPECT_EQ(escape_markdown("a\\|b"), "a\\\\\\|b");
  EXPECT_EQ(escape_markdown("<script>alert(1)</script> & &amp;"),
            "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &amp;amp;");
  EXPECT_EQ(escape_markdown("`code` *em* [link](x) ~~s~~"),
            "\\`code\\` \\*em\\* \\[link\\](x) \\~\\~s\\~\\~");
  EXPECT_EQ(escape_markdown("perf.busbw_floor _x_"), "perf.busbw\\_floor \\_x\\_");
}

TEST(MarkdownEscape, LineBreaksTabsAndControlCharactersKeepTheTextOnOneLine) {
  EXPECT_EQ(escape_markdown("a\nb\rc\r\nd\n\re"), "a<br>b<br>c<br>d<br><br>e");
  EXPECT_EQ(escape_markdown("a\tb"), "a b");
  // The control range ends below the space; DEL is a control character too.
  EXPECT_EQ(escape_markdown(std::string("\x1f\x20\x7e\x7f", 4)), "\\x1f \\~\\x7f");
  EXPECT_EQ(escape_markdown(std::string("\0", 1)), "\\x00");
  EXPECT_EQ(escape_markdown("\x08"), "\\x08");
  EXPECT_EQ(escape_markdown("\x0b"), "\\x0b");
  // UTF-8 passes through untouched.
  EXPECT_EQ(escape_markdown("n\xc3\xb6\xe2\x80\x93"), "n\xc3\xb6\xe2\x80\x93");
}

TEST(MarkdownReport, HostileTextKeepsEveryTableWholeAndReadsAsWritten) {
  const std::string hostile = "a|b\nc\rd\r\ne\tf `g` <script>x</script> \\| 'q' \"dq\"";
  const std::string escaped =
      "a\\|b<br>c<br>d<br>e f \\`g\\` &lt;script&gt;x&lt;/script&gt; \\\\\\| 'q' \"dq\"";
  FleetVerdict v = verdict();
  v.nodes[2].node = hostile;
  v.nodes[2].reasons[0].message = hostile;
  v.nodes[2].reasons[0].action = hostile;
  v.nodes[1].reasons[0].code = hostile;
  RunDetails run = details();
  run.judged = {{hostile, hostile, hostile, 1 << 20, 4e9}};
  BurnGpu burn = run.burns[0];
  burn.node = hostile;
  burn.kernel = hostile;
  burn.status = hostile;
  burn.reason = hostile;
  run.burns.push_back(burn);
  MembwGpu membw = run.membws[0];
  membw.node = hostile;
  membw.status = hostile;
  membw.reason = hostile;
  run.membws.push_back(membw);
  run.pairs[0].bad_nodes = {hostile};
  run.runs[0].run_id = hostile;
  const std::string md = make_verdict_reporter("md")->render(Report(v, &run));
  // Nodes: header, rule, two nodes; busbw: header, rule, one group; GPUs: header, rule, two.
  const std::vector<std::pair<std::size_t, std::size_t>> expected = {{4, 5}, {3, 7}, {4, 5}};
  EXPECT_EQ(tables(md), expected) << md;
  EXPECT_THAT(md, HasSubstr("| " + escaped + " | quarantined | isolate | "));
  EXPECT_THAT(md,
              HasSubstr("| " + escaped + " | 3 | membw | " + escaped + " | " + escaped + " |\n"));
  EXPECT_THAT(md, HasSubstr("- bad node: " + escaped + "\n"));
  EXPECT_THAT(md, HasSubstr("- " + escaped + ": \n"));
  EXPECT_THAT(md, Not(HasSubstr("<script>")));
}

// The quote that came back as &#39; (issue 30, 17): reasons are written as they read.
TEST(MarkdownReport, QuotesInReasonsAreNotReferences) {
  FleetVerdict v = verdict();
  v.nodes[2].reasons[0].message = "DCGM test 'Memory' failed: \"ECC\"";
  const std::string md = make_verdict_reporter("md")->render(Report(v));
  EXPECT_THAT(md, HasSubstr("DCGM test 'Memory' failed: \"ECC\""));
  EXPECT_THAT(md, Not(HasSubstr("&#39;")));
  EXPECT_THAT(md, Not(HasSubstr("&quot;")));
}

// The model from real records: the committed v1 burn and membw lines, read through the
// validator as certify reads them; the figures come from the lines the validator's reader kept.
TEST(RunDetails, BurnAndMembwFiguresComeFromTheJudgedRecords) {
  const std::string burn = fixtures::source_path("tests/fixtures/records/v1/burn.jsonl").string();
  const std::string membw = fixtures::source_path("tests/fixtures/records/v1/membw.jsonl").string();
  GpuRecordLines gpu_lines;
  InputOptions options;
  options.on_record = gpu_lines.observer();
  LoadedInputs inputs = load_inputs({burn, membw}, options);
  const Baseline baseline = fixtures::shipped_baseline("h100-sxm-8gpu-ndr400");
  const FleetVerdict v = judge(inputs.evidence, baseline, nullptr, std::move(inputs.notes));
  const RunDetails run = collect_run_details(inputs.evidence, baseline, v, gpu_lines);
  const auto gpu0 = std::find_if(run.burns.begin(), run.burns.end(), [](const BurnGpu& gpu) {
    return gpu.gpu == 0 && gpu.status == "ok";
  });
  ASSERT_NE(gpu0, run.burns.end());
  EXPECT_EQ(gpu0->node, "node0");
  EXPECT_EQ(gpu0->name, "NVIDIA H100 80GB HBM3");
  EXPECT_DOUBLE_EQ(gpu0->tflops.value_or(0), 707.95);
  EXPECT_DOUBLE_EQ(gpu0->tflops_min.value_or(0), 702.5);
  EXPECT_DOUBLE_EQ(gpu0->datasheet_peak_tflops.value_or(0), 989.4);
  EXPECT_DOUBLE_EQ(gpu0->sm_clock_mhz.min.value_or(0), 1830);
  EXPECT_DOUBLE_EQ(gpu0->power_limit_w.value_or(0), 700);
  ASSERT_EQ(gpu0->throttle_s.size(), 1U);
  EXPECT_EQ(gpu0->throttle_s[0].first, "sw_power_cap");
  const auto measured = std::find_if(run.membws.begin(), run.membws.end(),
                                     [](const MembwGpu& gpu) { return gpu.datasheet_peak; });
  ASSERT_NE(measured, run.membws.end());
  EXPECT_GT(*measured->datasheet_peak, 1e12);
  EXPECT_TRUE(measured->copy.has_value());
}

}  // namespace
}  // namespace commcert
