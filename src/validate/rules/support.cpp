#include "validate/rules/support.hpp"

#include <fmt/format.h>

#include "core/units.hpp"
#include "validate/checks.hpp"

namespace commcert::rules {

Finding metric_finding(const JudgeContext& context, ReasonCode code, std::string_view rule,
                       const MetricSeries& series, const MetricSample& sample,
                       std::optional<double> limit) {
  const Evidence& evidence = context.evidence;
  Finding f;
  f.code = code;
  f.node = sample.node;
  f.check = series.info.check;
  f.rule = std::string(rule);
  f.gpu = sample.gpu;
  f.measured = sample.value;
  f.limit = limit;
  f.unit = series.info.unit;
  f.evidence.push_back(sample.ref);
  std::string where = gpu_where(evidence, sample.gpu);
  if (sample.device != kNoString) {
    f.link = LinkRef{"ib_port", std::string(evidence.text(sample.device)), sample.port, {}};
    where = fmt::format("{} port {}: ", evidence.text(sample.device), sample.port);
  }
  // Collective figures say at which size they were measured.
  std::string metric = series.info.label;
  if (sample.bytes > 0) {
    metric.insert(metric.size() - 1, fmt::format(", {}", format_bytes(sample.bytes)));
  }
  f.fields = {{"where", where},
              {"metric", metric},
              {"measured", format_figure(sample.value)},
              {"unit", series.info.unit},
              {"limit", limit ? format_figure(*limit) : std::string("?")}};
  if (sample.run != kNoString) {
    f.fields.emplace_back("run", std::string(evidence.text(evidence.runs[sample.run].run_id)));
    f.fields.emplace_back("peers", std::to_string(sample.peers));
  }
  return f;
}

void limit_violation(const JudgeContext& context, std::vector<Finding>& out, ReasonCode code,
                     std::string_view rule, std::string_view phrase, const MetricSeries& series,
                     const MetricSample& sample, double limit) {
  if (sample.attributable) {
    out.push_back(metric_finding(context, code, rule, series, sample, limit));
    return;
  }
  Finding f = metric_finding(context, "perf.unattributed", rule, series, sample, limit);
  f.fields.emplace_back("rule", std::string(phrase));
  LinkRef hosts{"hosts", {}, -1, {}};
  // Name the sharing nodes only while the list stays readable; the message gives the count.
  constexpr std::size_t kMaxNamedHosts = 8;
  if (sample.run != kNoString && context.evidence.runs[sample.run].nodes.size() <= kMaxNamedHosts) {
    for (const NodeId node : context.evidence.runs[sample.run].nodes) {
      hosts.hosts.push_back(context.evidence.node_name(node));
    }
  }
  f.link = std::move(hosts);
  out.push_back(std::move(f));
}

Finding gpu_finding(const Evidence& evidence, ReasonCode code, std::string_view rule,
                    std::string_view check, NodeId node, const GpuKey& gpu, EvidenceRef ref) {
  Finding f;
  f.code = code;
  f.node = node;
  f.check = std::string(check);
  f.rule = std::string(rule);
  f.gpu = gpu;
  f.evidence.push_back(ref);
  f.fields = {{"where", gpu_where(evidence, gpu)}, {"check", std::string(check)}};
  return f;
}

void set_field(Finding& finding, std::string_view name, std::string value) {
  for (auto& [key, old] : finding.fields) {
    if (key == name) {
      old = std::move(value);
      return;
    }
  }
  finding.fields.emplace_back(std::string(name), std::move(value));
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  return fmt::format("{}", fmt::join(parts, separator));
}

std::string collective_check(std::string_view collective) {
  return fmt::format("collective.{}", collective);
}

std::string check_of_operation(std::string_view operation) {
  const std::string_view first = operation.substr(0, operation.find(' '));
  const std::string check = collective_check(first);
  return find_check(check) ? check : std::string("collective");
}

}  // namespace commcert::rules
