#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "validate/baseline.hpp"
#include "validate/evidence.hpp"
#include "validate/finding.hpp"
#include "validate/metrics.hpp"
#include "validate/pair_localization.hpp"

namespace commcert {

// What every rule may read. Rules never load, fold or print: the validator does.
struct JudgeContext {
  const Evidence& evidence;
  const Baseline& baseline;
  const MetricTable& metrics;
  std::span<const std::string> required;  // checks a node needs positive evidence for
  std::span<const NodeId> nodes;          // the fleet: every node the evidence names
  const PairLocalization& pairs;          // pairwise localization, computed once per judgement
};

// One way of judging evidence: a class in its own file under rules/ and its factory in the table
// of rules/registry.cpp.
class Rule {
 public:
  virtual ~Rule() = default;
  [[nodiscard]] virtual std::string_view id() const = 0;  // stable, e.g. "rule.floor"
  virtual void judge(const JudgeContext& context, std::vector<Finding>& out) const = 0;
  // The checks.health.gpu limits this rule reads (GpuHealthLimits::count); baselines accept,
  // default and write them because the rule declares them here.
  [[nodiscard]] virtual std::span<const GpuCountLimit> gpu_limits() const { return {}; }
};

// Every rule, in the order they run (the order does not change verdicts, only reason order).
[[nodiscard]] std::vector<std::unique_ptr<Rule>> make_rules();

}  // namespace commcert
