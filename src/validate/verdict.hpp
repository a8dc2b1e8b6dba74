#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/json.hpp"
#include "validate/evidence.hpp"
#include "validate/finding.hpp"
#include "validate/reasons.hpp"

namespace commcert {

enum class NodeState { kCertified, kQuarantined, kInconclusive };

[[nodiscard]] std::string_view to_string(NodeState state);

struct EvidenceLocation {
  std::string file;
  std::uint32_t line = 0;
};

// A finding in the catalog's words.
struct Reason {
  std::string code;
  Effect effect = Effect::kInconclusive;
  Severity severity = Severity::kUnknown;
  std::string check;
  std::string rule;
  std::string message;
  std::string action;
  int gpu_index = -1;
  std::string gpu_uuid;
  std::optional<LinkRef> link;
  std::optional<double> measured;
  std::optional<double> limit;
  std::string unit;
  std::vector<EvidenceLocation> evidence;
};

// What the pool needs per node: state, severity, the reason to act on first, all reasons.
struct NodeVerdict {
  std::string node;
  NodeState state = NodeState::kInconclusive;
  Severity severity = Severity::kUnknown;
  std::vector<Reason> reasons;                              // most severe first; warnings last
  std::vector<std::pair<std::string, std::string>> checks;  // check -> pass|warn|fail|inconclusive

  // nullptr for a certified node.
  [[nodiscard]] const Reason* first_reason() const;
};

struct FleetMetricSummary {
  std::string metric;
  std::string unit;
  std::size_t samples = 0;
  std::size_t nodes = 0;
  double median = 0;
  double mad = 0;
  double min = 0;
  double max = 0;
};

// Something about the input worth knowing that changes no node's state by itself.
struct InputNote {
  std::string code;
  std::string file;
  std::uint32_t line = 0;
  std::string message;

  // "FILE:LINE: ", "FILE: " (line 0: the file as a whole) or empty (a note about the fleet),
  // unescaped: each output escapes it as it escapes the message.
  [[nodiscard]] std::string place() const;
};

struct FleetVerdict {
  std::string baseline_path;
  std::string sku;
  std::string suite_path;  // empty: the baseline's required checks were used
  std::string suite_name;
  std::vector<std::string> required;
  std::vector<InputFileSummary> inputs;
  std::vector<InputNote> notes;
  std::vector<NodeVerdict> nodes;  // in natural name order (node2 before node10)
  std::vector<FleetMetricSummary> fleet;

  [[nodiscard]] std::size_t count(NodeState state) const;
  // 0 all certified, 1 some quarantined (wins over inconclusive), 3 some inconclusive.
  [[nodiscard]] int exit_status() const;
};

// verdict.json (docs/validator.md "verdict.json").
[[nodiscard]] Json to_json(const FleetVerdict& verdict);

// node2 < node10: digits compare as numbers.
[[nodiscard]] bool natural_less(std::string_view a, std::string_view b);

}  // namespace commcert
