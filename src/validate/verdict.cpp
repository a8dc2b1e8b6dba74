#include "validate/verdict.hpp"

#include <cctype>

#include <fmt/format.h>

#include "core/build_info.hpp"
#include "core/errors.hpp"
#include "core/record.hpp"

namespace commcert {

std::string InputNote::place() const {
  if (file.empty()) return {};
  return line > 0 ? fmt::format("{}:{}: ", file, line) : fmt::format("{}: ", file);
}
namespace {

constexpr int kVerdictSchema = 1;

Json optional_number(const std::optional<double>& value) {
  return value ? Json(*value) : Json(nullptr);
}

Json to_json(const LinkRef& link) {
  Json out = {{"type", link.type}};
  if (link.type == "switch_path") {
    out["path"] = link.device;
    out["switches"] = link.hosts;
    return out;
  }
  if (!link.device.empty()) out["device"] = link.device;
  if (link.index >= 0) out[link.type == "nvlink" ? "link" : "port"] = link.index;
  if (!link.hosts.empty()) out["hosts"] = link.hosts;
  return out;
}

Json to_json(const Reason& reason) {
  Json evidence = Json::array();
  for (const auto& e : reason.evidence)
    evidence.push_back({{"file", e.file}, {"line", e.line}});
  Json gpu = nullptr;
  if (reason.gpu_index >= 0) {
    gpu = {{"index", reason.gpu_index},
           {"uuid", reason.gpu_uuid.empty() ? Json(nullptr) : Json(reason.gpu_uuid)}};
  }
  return {{"code", reason.code},
          {"effect", to_string(reason.effect)},
          {"severity", to_string(reason.severity)},
          {"check", reason.check},
          {"rule", reason.rule},
          {"message", reason.message},
          {"action", reason.action},
          {"gpu", gpu},
          {"link", reason.link ? to_json(*reason.link) : Json(nullptr)},
          {"measured", optional_number(reason.measured)},
          {"limit", optional_number(reason.limit)},
          {"unit", reason.unit.empty() ? Json(nullptr) : Json(reason.unit)},
          {"evidence", std::move(evidence)}};
}

}  // namespace

std::string_view to_string(NodeState state) {
  switch (state) {
    case NodeState::kCertified:
      return "certified";
    case NodeState::kQuarantined:
      return "quarantined";
    case NodeState::kInconclusive:
      return "inconclusive";
  }
  return "inconclusive";
}

const Reason* NodeVerdict::first_reason() const {
  if (state == NodeState::kCertified || reasons.empty()) return nullptr;
  return &reasons.front();
}

std::size_t FleetVerdict::count(NodeState state) const {
  std::size_t n = 0;
  for (const auto& node : nodes)
    n += node.state == state ? 1 : 0;
  return n;
}

int FleetVerdict::exit_status() const {
  if (count(NodeState::kQuarantined) > 0) return to_int(ExitCode::kFailed);
  if (count(NodeState::kInconclusive) > 0) return to_int(ExitCode::kInconclusive);
  return to_int(ExitCode::kOk);
}

Json to_json(const FleetVerdict& verdict) {
  Json nodes = Json::array();
  for (const auto& node : verdict.nodes) {
    Json reasons = Json::array();
    for (const auto& reason : node.reasons)
      reasons.push_back(to_json(reason));
    Json checks = Json::object();
    for (const auto& [check, status] : node.checks)
      checks[check] = status;
    const Reason* first = node.first_reason();
    nodes.push_back({{"node", node.node},
                     {"state", to_string(node.state)},
                     {"severity", to_string(node.severity)},
                     {"first_reason", first ? Json({{"code", first->code},
                                                    {"message", first->message},
                                                    {"action", first->action}})
                                            : Json(nullptr)},
                     {"checks", std::move(checks)},
                     {"reasons", std::move(reasons)}});
  }
  Json inputs = Json::array();
  for (const auto& input : verdict.inputs) {
    inputs.push_back({{"path", input.path},
                      {"lines", input.lines},
                      {"records", input.records},
                      {"duplicates", input.duplicates},
                      {"unreadable", input.unreadable},
                      {"truncated", input.truncated}});
  }
  Json notes = Json::array();
  for (const auto& note : verdict.notes) {
    notes.push_back({{"code", note.code},
                     {"file", note.file.empty() ? Json(nullptr) : Json(note.file)},
                     {"line", note.line > 0 ? Json(note.line) : Json(nullptr)},
                     {"message", note.message}});
  }
  Json fleet = Json::array();
  for (const auto& m : verdict.fleet) {
    fleet.push_back({{"metric", m.metric},
                     {"unit", m.unit},
                     {"samples", m.samples},
                     {"nodes", m.nodes},
                     {"median", m.median},
                     {"mad", m.mad},
                     {"min", m.min},
                     {"max", m.max}});
  }
  return {{"schema", kVerdictSchema},
          {"kind", "verdict"},
          {"time", utc_timestamp_now()},
          {"commcert", {{"version", build_info::kVersion}, {"git", build_info::kGitDescribe}}},
          {"baseline", {{"path", verdict.baseline_path}, {"sku", verdict.sku}}},
          {"suite",
           {{"path", verdict.suite_path.empty() ? Json(nullptr) : Json(verdict.suite_path)},
            {"name", verdict.suite_name.empty() ? Json(nullptr) : Json(verdict.suite_name)}}},
          {"required", verdict.required},
          {"exit_status", verdict.exit_status()},
          {"summary",
           {{"nodes", verdict.nodes.size()},
            {"certified", verdict.count(NodeState::kCertified)},
            {"quarantined", verdict.count(NodeState::kQuarantined)},
            {"inconclusive", verdict.count(NodeState::kInconclusive)}}},
          {"inputs", std::move(inputs)},
          {"notes", std::move(notes)},
          {"nodes", std::move(nodes)},
          {"fleet", std::move(fleet)}};
}

bool natural_less(std::string_view a, std::string_view b) {
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = std::isdigit(static_cast<unsigned char>(a[i])) != 0;
    const bool db = std::isdigit(static_cast<unsigned char>(b[j])) != 0;
    if (da && db) {
      std::size_t ei = i;
      std::size_t ej = j;
      while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei])))
        ++ei;
      while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej])))
        ++ej;
      // Compare by length after leading zeros, then digit by digit: no overflow.
      std::string_view na = a.substr(i, ei - i);
      std::string_view nb = b.substr(j, ej - j);
      while (na.size() > 1 && na.front() == '0')
        na.remove_prefix(1);
      while (nb.size() > 1 && nb.front() == '0')
        nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  if (i == a.size() && j == b.size()) return a < b;  // node01 vs node1: any fixed order
  return a.size() - i < b.size() - j;
}

}  // namespace commcert
