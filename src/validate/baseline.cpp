#include "validate/baseline.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/bounded_input.hpp"
#include "core/errors.hpp"
#include "core/units.hpp"
#include "validate/checks.hpp"
#include "validate/detail/yaml_input.hpp"
#include "validate/metric_catalog.hpp"

namespace commcert {
namespace {

using detail::join_path;
using detail::YamlInput;

constexpr int kBaselineSchema = 1;

double percentage(const YamlInput& in, const YAML::Node& node, std::string_view path) {
  const double value = in.number(node, path);
  if (value < 0 || value >= 100) in.fail(node, path, "a percentage from 0 to below 100");
  return value;
}

FleetSpec parse_fleet(const YamlInput& in, const YAML::Node& node, std::string_view path,
                      FleetSpec fleet) {
  if (node.IsScalar()) {
    fleet.enabled = in.boolean(node, path);
    return fleet;
  }
  in.expect_map(node, path);
  in.allow_keys(node, path, {"enabled", "min_nodes", "max_deficit_pct", "min_robust_z"});
  if (node["enabled"]) fleet.enabled = in.boolean(node["enabled"], join_path(path, "enabled"));
  if (node["min_nodes"]) {
    const auto value = in.integer(node["min_nodes"], join_path(path, "min_nodes"));
    if (value < 3 || value > 1000000) {
      in.fail(node["min_nodes"], join_path(path, "min_nodes"), "must be 3 or more");
    }
    fleet.min_nodes = static_cast<int>(value);
  }
  if (node["max_deficit_pct"]) {
    fleet.max_deficit_pct =
        percentage(in, node["max_deficit_pct"], join_path(path, "max_deficit_pct"));
  }
  if (node["min_robust_z"]) {
    fleet.min_robust_z = in.number(node["min_robust_z"], join_path(path, "min_robust_z"));
    if (fleet.min_robust_z <= 0) in.fail(node["min_robust_z"], path, "must be positive");
  }
  return fleet;
}

Bound parse_bound(const YamlInput& in, const YAML::Node& node, std::string_view path,
                  const FleetSpec& fleet) {
  in.expect_map(node, path);
  in.allow_keys(
      node, path,
      {"floor", "ceiling", "equals", "expected", "warn_band_pct", "max_regression_pct", "fleet"});
  if (node.size() == 0)
    in.fail(node, path, "empty bound: give a floor, ceiling, expected or fleet");
  Bound bound;
  bound.source = in.where(node);
  bound.fleet = fleet;
  const auto read = [&](const char* key, std::optional<double>& into) {
    if (node[key]) into = in.number(node[key], join_path(path, key));
  };
  read("floor", bound.floor);
  read("ceiling", bound.ceiling);
  read("equals", bound.equals);
  read("expected", bound.expected);
  if (node["warn_band_pct"]) {
    bound.warn_band_pct = percentage(in, node["warn_band_pct"], join_path(path, "warn_band_pct"));
  }
  if (node["max_regression_pct"]) {
    bound.max_regression_pct =
        percentage(in, node["max_regression_pct"], join_path(path, "max_regression_pct"));
  }
  if (node["fleet"]) bound.fleet = parse_fleet(in, node["fleet"], join_path(path, "fleet"), fleet);

  // Every metric a bound applies to (bandwidths, rates, temperatures, counts) is 0 or more: a
  // negative floor can never be missed, so it would pass any value, the opposite of a floor.
  if (bound.floor && *bound.floor < 0) {
    in.fail(node["floor"], join_path(path, "floor"),
            fmt::format("must be 0 or more, got {} (a negative floor passes every value)",
                        *bound.floor));
  }
  if (bound.floor && bound.ceiling && *bound.floor > *bound.ceiling) {
    in.fail(node["floor"], join_path(path, "floor"), "floor is above the ceiling");
  }
  if (bound.expected && bound.floor && *bound.expected < *bound.floor) {
    in.fail(node["expected"], join_path(path, "expected"), "expected is below the floor");
  }
  if (bound.expected && bound.ceiling && *bound.expected > *bound.ceiling) {
    in.fail(node["expected"], join_path(path, "expected"), "expected is above the ceiling");
  }
  if (bound.warn_band_pct && !bound.floor && !bound.ceiling) {
    in.fail(node["warn_band_pct"], join_path(path, "warn_band_pct"),
            "a warn band needs a floor or a ceiling");
  }
  if (bound.max_regression_pct && !bound.expected) {
    in.fail(node["max_regression_pct"], join_path(path, "max_regression_pct"),
            "a regression limit needs `expected`");
  }
  if (bound.expected && *bound.expected <= 0) {
    in.fail(node["expected"], join_path(path, "expected"), "must be positive");
  }
  return bound;
}

// The bounds under `key` of a check block: either one bound, or (for `busbw_gb_per_s` and
// `tflops`) a mapping from scope or kernel to a bound.
void parse_metric(const YamlInput& in, const YAML::Node& node, std::string_view check,
                  std::string_view key, std::string_view path, Baseline& out) {
  if (auto info = metric_at(check, key)) {
    out.bounds[info->id] = parse_bound(in, node, path, out.fleet);
    return;
  }
  in.expect_map(node, path);
  for (const auto& entry : node) {
    const std::string sub = entry.first.Scalar();
    const std::string sub_path = join_path(path, sub);
    const auto info = metric_at(check, fmt::format("{}.{}", key, sub));
    if (!info) {
      std::string known;
      for (const auto& k : metric_keys(check)) {
        if (k.starts_with(fmt::format("{}.", key)))
          known += (known.empty() ? "" : ", ") + k.substr(key.size() + 1);
      }
      in.fail(entry.first, sub_path, fmt::format("unknown name (known: {})", known));
    }
    out.bounds[info->id] = parse_bound(in, entry.second, sub_path, out.fleet);
  }
}

std::vector<std::string> with_metric_keys(std::string_view check, std::vector<std::string> keys) {
  for (const auto& key : metric_keys(check)) {
    const std::string top = key.substr(0, key.find('.'));
    if (std::find(keys.begin(), keys.end(), top) == keys.end()) keys.push_back(top);
  }
  return keys;
}

bool is_metric_key(std::string_view check, std::string_view key) {
  for (const auto& k : metric_keys(check)) {
    if (k.substr(0, k.find('.')) == key) return true;
  }
  return false;
}

void parse_collective(const YamlInput& in, const YAML::Node& node, const std::string& check,
                      const std::string& path, Baseline& out) {
  CollectiveSpec spec;
  in.allow_keys(node, path,
                with_metric_keys(check, {"min_bytes", "require_check", "straggler", "pairs"}));
  if (node["min_bytes"]) spec.min_bytes = in.size(node["min_bytes"], join_path(path, "min_bytes"));
  if (node["require_check"]) {
    spec.require_check = in.boolean(node["require_check"], join_path(path, "require_check"));
  }
  if (const YAML::Node s = node["straggler"]) {
    const std::string s_path = join_path(path, "straggler");
    if (s.IsScalar()) {
      if (in.boolean(s, s_path)) spec.straggler = StragglerSpec{};
    } else {
      in.expect_map(s, s_path);
      in.allow_keys(s, s_path, {"min_lead_pct", "min_share_pct", "min_records"});
      StragglerSpec straggler;
      if (s["min_lead_pct"]) {
        straggler.min_lead_pct = in.number(s["min_lead_pct"], join_path(s_path, "min_lead_pct"));
        if (straggler.min_lead_pct <= 0) in.fail(s["min_lead_pct"], s_path, "must be positive");
      }
      if (s["min_share_pct"]) {
        straggler.min_share_pct =
            percentage(in, s["min_share_pct"], join_path(s_path, "min_share_pct"));
      }
      if (s["min_records"]) {
        const auto value = in.integer(s["min_records"], join_path(s_path, "min_records"));
        if (value < 1) in.fail(s["min_records"], s_path, "must be 1 or more");
        straggler.min_records = static_cast<int>(value);
      }
      spec.straggler = straggler;
    }
  }
  if (const YAML::Node p = node["pairs"]) {
    const std::string p_path = join_path(path, "pairs");
    in.expect_map(p, p_path);
    in.allow_keys(p, p_path, {"max_deficit_pct", "floor_gb_per_s", "min_pairs"});
    if (p["max_deficit_pct"]) {
      spec.pairs.max_deficit_pct =
          percentage(in, p["max_deficit_pct"], join_path(p_path, "max_deficit_pct"));
    }
    if (p["floor_gb_per_s"]) {
      spec.pairs.floor_gb_per_s =
          in.number(p["floor_gb_per_s"], join_path(p_path, "floor_gb_per_s"));
      if (*spec.pairs.floor_gb_per_s <= 0) in.fail(p["floor_gb_per_s"], p_path, "must be positive");
    }
    if (p["min_pairs"]) {
      const auto value = in.integer(p["min_pairs"], join_path(p_path, "min_pairs"));
      if (value < 2) in.fail(p["min_pairs"], p_path, "must be 2 or more");
      spec.pairs.min_pairs = static_cast<int>(value);
    }
  }
  out.collectives[check] = spec;
}

std::int64_t limit(const YamlInput& in, const YAML::Node& node, std::string_view path) {
  const std::int64_t value = in.integer(node, path);
  if (value < 0) in.fail(node, path, "must be 0 or more");
  return value;
}

void parse_gpu_health(const YamlInput& in, const YAML::Node& node, const std::string& path,
                      Baseline& out) {
  // The rules' declared limits are listed where the first of them has always stood.
  std::vector<std::string> keys = {"max_uncorrectable_ecc", "max_correctable_ecc",
                                   "remapped_rows_warn"};
  for (const GpuCountLimit& declared : declared_gpu_count_limits())
    keys.emplace_back(declared.key);
  keys.insert(keys.end(),
              {"pcie_at_max", "pcie_min_gen", "pcie_min_width", "max_pcie_replays",
               "max_nvlink_replay_errors", "max_nvlink_recovery_errors", "max_nvlink_crc_errors",
               "xid_fatal", "xid_ignored", "allowed_clock_events"});
  in.allow_keys(node, path, with_metric_keys("health.gpu", keys));
  auto& l = out.gpu_health;
  const auto get = [&](std::string_view key) { return node[std::string(key)]; };
  const auto p = [&](std::string_view key) { return join_path(path, key); };
  for (const GpuCountLimit& declared : declared_gpu_count_limits()) {
    if (get(declared.key))
      l.counts[std::string(declared.key)] = limit(in, get(declared.key), p(declared.key));
  }
  if (get("max_uncorrectable_ecc"))
    l.max_uncorrectable_ecc = limit(in, get("max_uncorrectable_ecc"), p("max_uncorrectable_ecc"));
  if (get("max_correctable_ecc"))
    l.max_correctable_ecc = limit(in, get("max_correctable_ecc"), p("max_correctable_ecc"));
  if (get("remapped_rows_warn"))
    l.remapped_rows_warn = limit(in, get("remapped_rows_warn"), p("remapped_rows_warn"));
  if (get("pcie_at_max")) l.pcie_at_max = in.boolean(get("pcie_at_max"), p("pcie_at_max"));
  // A PCIe generation or lane count is small; a larger one is a typo, not a limit (and would
  // not fit an int).
  const auto pcie_figure = [&](std::string_view key, std::int64_t most) {
    const std::int64_t value = limit(in, get(key), p(key));
    if (value > most) in.fail(get(key), p(key), fmt::format("must be {} or less", most));
    return static_cast<int>(value);
  };
  if (get("pcie_min_gen")) l.pcie_min_gen = pcie_figure("pcie_min_gen", 16);
  if (get("pcie_min_width")) l.pcie_min_width = pcie_figure("pcie_min_width", 64);
  if (get("max_pcie_replays"))
    l.max_pcie_replays = limit(in, get("max_pcie_replays"), p("max_pcie_replays"));
  if (get("max_nvlink_replay_errors"))
    l.max_nvlink_replay_errors =
        limit(in, get("max_nvlink_replay_errors"), p("max_nvlink_replay_errors"));
  if (get("max_nvlink_recovery_errors"))
    l.max_nvlink_recovery_errors =
        limit(in, get("max_nvlink_recovery_errors"), p("max_nvlink_recovery_errors"));
  if (get("max_nvlink_crc_errors"))
    l.max_nvlink_crc_errors = limit(in, get("max_nvlink_crc_errors"), p("max_nvlink_crc_errors"));
  if (get("xid_fatal")) l.xid_fatal = in.integers(get("xid_fatal"), p("xid_fatal"));
  if (get("xid_ignored")) l.xid_ignored = in.integers(get("xid_ignored"), p("xid_ignored"));
  if (get("allowed_clock_events"))
    l.allowed_clock_events = in.strings(get("allowed_clock_events"), p("allowed_clock_events"));
}

std::map<std::string, std::int64_t> counter_limits(const YamlInput& in, const YAML::Node& node,
                                                   const std::string& path) {
  in.expect_map(node, path);
  std::map<std::string, std::int64_t> limits;
  for (const auto& entry : node) {
    const std::string name = entry.first.Scalar();
    limits[name] = limit(in, entry.second, join_path(path, name));
  }
  return limits;
}

void parse_ib_health(const YamlInput& in, const YAML::Node& node, const std::string& path,
                     Baseline& out) {
  in.allow_keys(node, path,
                with_metric_keys("health.ib", {"link_layers", "up_states", "up_phys_states",
                                               "fail_counters", "warn_counters"}));
  auto& l = out.ib_health;
  if (node["link_layers"]) {
    l.link_layers = in.strings(node["link_layers"], join_path(path, "link_layers"));
  }
  if (node["up_states"]) l.up_states = in.strings(node["up_states"], join_path(path, "up_states"));
  if (node["up_phys_states"]) {
    l.up_phys_states = in.strings(node["up_phys_states"], join_path(path, "up_phys_states"));
  }
  if (node["fail_counters"]) {
    l.fail_counters = counter_limits(in, node["fail_counters"], join_path(path, "fail_counters"));
  }
  if (node["warn_counters"]) {
    l.warn_counters = counter_limits(in, node["warn_counters"], join_path(path, "warn_counters"));
  }
}

void parse_links(const YamlInput& in, const YAML::Node& node, const std::string& path,
                 Baseline& out) {
  in.allow_keys(
      node, path,
      {"write_bw_floor_gb_per_s", "write_bw_bidir_floor_gb_per_s", "read_bw_floor_gb_per_s",
       "write_lat_ceiling_us", "max_deficit_pct", "min_pairs", "min_bytes", "max_counter_deltas"});
  auto& l = out.links;
  const auto positive = [&](const char* key, std::optional<double>& into) {
    if (!node[key]) return;
    into = in.number(node[key], join_path(path, key));
    if (!(*into > 0)) in.fail(node[key], join_path(path, key), "must be positive");
  };
  positive("write_bw_floor_gb_per_s", l.write_bw_floor_gb_per_s);
  positive("write_bw_bidir_floor_gb_per_s", l.write_bw_bidir_floor_gb_per_s);
  positive("read_bw_floor_gb_per_s", l.read_bw_floor_gb_per_s);
  positive("write_lat_ceiling_us", l.write_lat_ceiling_us);
  if (node["max_deficit_pct"]) {
    l.max_deficit_pct = percentage(in, node["max_deficit_pct"], join_path(path, "max_deficit_pct"));
  }
  if (node["min_pairs"]) {
    const auto value = in.integer(node["min_pairs"], join_path(path, "min_pairs"));
    if (value < 2 || value > 1000000) {
      in.fail(node["min_pairs"], join_path(path, "min_pairs"), "must be 2 or more");
    }
    l.min_pairs = static_cast<int>(value);
  }
  if (node["min_bytes"]) l.min_bytes = in.size(node["min_bytes"], join_path(path, "min_bytes"));
  if (node["max_counter_deltas"]) {
    l.max_counter_deltas =
        counter_limits(in, node["max_counter_deltas"], join_path(path, "max_counter_deltas"));
  }
}

void parse_p2p(const YamlInput& in, const YAML::Node& node, const std::string& path,
               Baseline& out) {
  in.allow_keys(node, path,
                {"pair_floor_gb_per_s", "pair_latency_ceiling_us", "max_deficit_pct",
                 "max_asymmetry_pct", "min_pairs", "host_min_pcie_pct", "host_floor_gb_per_s",
                 "host_remote_floor_gb_per_s", "device_local_floor_gb_per_s"});
  auto& p = out.p2p;
  const auto positive = [&](const char* key, std::optional<double>& into) {
    if (!node[key]) return;
    into = in.number(node[key], join_path(path, key));
    if (!(*into > 0)) in.fail(node[key], join_path(path, key), "must be positive");
  };
  positive("pair_floor_gb_per_s", p.pair_floor_gb_per_s);
  positive("pair_latency_ceiling_us", p.pair_latency_ceiling_us);
  positive("host_floor_gb_per_s", p.host_floor_gb_per_s);
  positive("host_remote_floor_gb_per_s", p.host_remote_floor_gb_per_s);
  positive("device_local_floor_gb_per_s", p.device_local_floor_gb_per_s);
  const auto pct = [&](const char* key, double& into) {
    if (node[key]) into = percentage(in, node[key], join_path(path, key));
  };
  pct("max_deficit_pct", p.max_deficit_pct);
  pct("max_asymmetry_pct", p.max_asymmetry_pct);
  pct("host_min_pcie_pct", p.host_min_pcie_pct);
  if (node["min_pairs"]) {
    const auto value = in.integer(node["min_pairs"], join_path(path, "min_pairs"));
    if (value < 2 || value > 1000000) {
      in.fail(node["min_pairs"], join_path(path, "min_pairs"), "must be 2 or more");
    }
    p.min_pairs = static_cast<int>(value);
  }
}

void parse_check(const YamlInput& in, const YAML::Node& key, const YAML::Node& node,
                 Baseline& out) {
  const std::string& check = key.Scalar();
  const std::string path = join_path("checks", check);
  const CheckInfo* info = find_check(check);
  if (!info) {
    std::string known;
    for (const auto& c : all_checks())
      known += (known.empty() ? "" : ", ") + std::string(c.id);
    in.fail(key, path, fmt::format("unknown check (known: {})", known));
  }
  if (node.IsNull()) return;  // a check with no bounds: its evidence is judged on defaults
  in.expect_map(node, path);
  switch (info->kind) {
    case CheckKind::kCollective:
      parse_collective(in, node, check, path, out);
      break;
    case CheckKind::kHealthGpu:
      parse_gpu_health(in, node, path, out);
      break;
    case CheckKind::kHealthIb:
      parse_ib_health(in, node, path, out);
      break;
    case CheckKind::kLinks:
      parse_links(in, node, path, out);
      break;
    case CheckKind::kP2p:
      parse_p2p(in, node, path, out);
      break;
    case CheckKind::kBurn:
    case CheckKind::kMembw:
    case CheckKind::kHealthNode:
      in.allow_keys(node, path, with_metric_keys(check, {}));
      break;
  }
  for (const auto& entry : node) {
    const std::string name = entry.first.Scalar();
    if (is_metric_key(check, name))
      parse_metric(in, entry.second, check, name, join_path(path, name), out);
  }
}

}  // namespace

const CollectiveSpec* Baseline::collective(std::string_view check) const {
  const auto it = collectives.find(std::string(check));
  return it == collectives.end() ? nullptr : &it->second;
}

std::map<std::string, std::int64_t, std::less<>> GpuHealthLimits::declared_count_defaults() {
  std::map<std::string, std::int64_t, std::less<>> counts;
  for (const GpuCountLimit& declared : declared_gpu_count_limits())
    counts.emplace(declared.key, declared.default_value);
  return counts;
}

std::int64_t GpuHealthLimits::count(const GpuCountLimit& limit) const {
  const auto it = counts.find(limit.key);
  return it == counts.end() ? limit.default_value : it->second;
}

bool IbHealthLimits::judges(std::string_view link_layer) const {
  return link_layers.empty() || link_layer.empty() ||
         std::find(link_layers.begin(), link_layers.end(), link_layer) != link_layers.end();
}

const Bound* Baseline::bound(std::string_view metric) const {
  const auto it = bounds.find(std::string(metric));
  return it == bounds.end() ? nullptr : &it->second;
}

Baseline parse_baseline(std::string_view text, std::string_view origin) {
  const YamlInput in{std::string(origin)};
  const YAML::Node root = in.load(text);
  if (!root.IsDefined() || root.IsNull()) {
    throw UsageError(fmt::format("{}: the baseline is empty", origin));
  }
  in.expect_map(root, "(document)");
  in.allow_keys(root, "", {"schema", "sku", "description", "node", "required", "fleet", "checks"});

  Baseline b;
  b.path = std::string(origin);
  if (!root["schema"])
    in.fail(root, "schema", fmt::format("missing (write `schema: {}`)", kBaselineSchema));
  if (in.integer(root["schema"], "schema") != kBaselineSchema) {
    in.fail(root["schema"], "schema",
            fmt::format("this validator reads baseline schema {}", kBaselineSchema));
  }
  if (!root["sku"]) in.fail(root, "sku", "missing");
  b.sku = in.string(root["sku"], "sku");
  if (root["description"]) b.description = in.string(root["description"], "description");

  if (const YAML::Node node = root["node"]) {
    in.expect_map(node, "node");
    in.allow_keys(node, "node", {"gpus", "ib_ports", "nvlinks_per_gpu"});
    const auto count = [&](const char* key, std::optional<int>& into) {
      if (!node[key]) return;
      const std::int64_t value = in.integer(node[key], join_path("node", key));
      if (value < 0 || value > 4096) in.fail(node[key], join_path("node", key), "out of range");
      into = static_cast<int>(value);
    };
    count("gpus", b.gpus_per_node);
    count("ib_ports", b.ib_ports_per_node);
    count("nvlinks_per_gpu", b.nvlinks_per_gpu);
  }

  if (!root["required"]) in.fail(root, "required", "missing: list the checks a node must pass");
  b.required = in.strings(root["required"], "required");
  if (b.required.empty()) in.fail(root["required"], "required", "an empty list certifies nothing");
  for (std::size_t i = 0; i < b.required.size(); ++i) {
    if (!find_check(b.required[i])) {
      in.fail(root["required"][i], fmt::format("required[{}]", i),
              fmt::format("unknown check '{}'", b.required[i]));
    }
  }

  if (root["fleet"]) b.fleet = parse_fleet(in, root["fleet"], "fleet", b.fleet);

  if (const YAML::Node checks = root["checks"]) {
    in.expect_map(checks, "checks");
    for (const auto& entry : checks)
      parse_check(in, entry.first, entry.second, b);
  }
  return b;
}

Baseline load_baseline(const std::filesystem::path& path) {
  return parse_baseline(read_bounded_file(path, kMaxYamlFileBytes, "baseline"), path.string());
}

}  // namespace commcert
