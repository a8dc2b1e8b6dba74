// baseline_to_yaml: the writing half of baseline.hpp, used by `commcert baseline`.
#include <yaml-cpp/yaml.h>

#include <fmt/format.h>

#include "validate/baseline.hpp"
#include "validate/checks.hpp"
#include "validate/metric_catalog.hpp"

namespace commcert {
namespace {

std::string number(double value) {
  return fmt::format("{:.6g}", value);
}

std::string size_text(std::uint64_t bytes) {
  for (const auto& [shift, suffix] : {std::pair{40, "T"}, {30, "G"}, {20, "M"}, {10, "K"}}) {
    const std::uint64_t unit = std::uint64_t{1} << shift;
    if (bytes >= unit && bytes % unit == 0) return fmt::format("{}{}", bytes / unit, suffix);
  }
  return std::to_string(bytes);
}

class Writer {
 public:
  explicit Writer(const std::map<std::string, std::string>& comments) : comments_(comments) {}

  YAML::Emitter out;

  // Key and scalar value, with the comment for `path` after it.
  template <typename T>
  void scalar(const std::string& path, std::string_view key, const T& value) {
    out << YAML::Key << std::string(key) << YAML::Value << value;
    comment(path);
  }
  void comment(const std::string& path) {
    if (const auto it = comments_.find(path); it != comments_.end()) {
      out << YAML::Comment(it->second);
    }
  }
  void begin(const std::string& path, std::string_view key) {
    out << YAML::Key << std::string(key);
    comment(path);
    out << YAML::Value << YAML::BeginMap;
  }
  void end() { out << YAML::EndMap; }

  void fleet(const std::string& path, const FleetSpec& fleet) {
    out << YAML::Key << "fleet" << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "enabled" << YAML::Value << fleet.enabled;
    out << YAML::Key << "min_nodes" << YAML::Value << fleet.min_nodes;
    out << YAML::Key << "max_deficit_pct" << YAML::Value << number(fleet.max_deficit_pct);
    out << YAML::Key << "min_robust_z" << YAML::Value << number(fleet.min_robust_z);
    out << YAML::EndMap;
    comment(path);
  }

  void bound(const std::string& path, std::string_view key, const Bound& b,
             const FleetSpec& defaults) {
    begin(path, key);
    const auto opt = [&](const char* name, const std::optional<double>& value) {
      if (value) scalar(path + "." + name, name, number(*value));
    };
    opt("floor", b.floor);
    opt("ceiling", b.ceiling);
    opt("equals", b.equals);
    opt("expected", b.expected);
    opt("warn_band_pct", b.warn_band_pct);
    opt("max_regression_pct", b.max_regression_pct);
    if (!(b.fleet == defaults)) fleet(path + ".fleet", b.fleet);
    end();
  }

 private:
  const std::map<std::string, std::string>& comments_;
};

template <typename T>
void list(YAML::Emitter& out, std::string_view key, const std::vector<T>& values) {
  out << YAML::Key << std::string(key) << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (const auto& value : values)
    out << value;
  out << YAML::EndSeq;
}

void counters(YAML::Emitter& out, std::string_view key,
              const std::map<std::string, std::int64_t>& map) {
  out << YAML::Key << std::string(key) << YAML::Value << YAML::Flow << YAML::BeginMap;
  for (const auto& [name, value] : map)
    out << YAML::Key << name << YAML::Value << value;
  out << YAML::EndMap;
}

void health_gpu(Writer& w, const GpuHealthLimits& l) {
  auto& out = w.out;
  const std::string p = "checks.health.gpu";
  w.scalar(p + ".max_uncorrectable_ecc", "max_uncorrectable_ecc", l.max_uncorrectable_ecc);
  if (l.max_correctable_ecc)
    w.scalar(p + ".max_correctable_ecc", "max_correctable_ecc", *l.max_correctable_ecc);
  w.scalar(p + ".remapped_rows_warn", "remapped_rows_warn", l.remapped_rows_warn);
  // The rules' own limits, written where the first of them has always stood.
  for (const GpuCountLimit& declared : declared_gpu_count_limits()) {
    const std::string key(declared.key);
    w.scalar(fmt::format("{}.{}", p, key), key, l.count(declared));
  }
  w.scalar(p + ".pcie_at_max", "pcie_at_max", l.pcie_at_max);
  if (l.pcie_min_gen) w.scalar(p + ".pcie_min_gen", "pcie_min_gen", *l.pcie_min_gen);
  if (l.pcie_min_width) w.scalar(p + ".pcie_min_width", "pcie_min_width", *l.pcie_min_width);
  if (l.max_pcie_replays)
    w.scalar(p + ".max_pcie_replays", "max_pcie_replays", *l.max_pcie_replays);
  w.scalar(p + ".max_nvlink_replay_errors", "max_nvlink_replay_errors", l.max_nvlink_replay_errors);
  w.scalar(p + ".max_nvlink_recovery_errors", "max_nvlink_recovery_errors",
           l.max_nvlink_recovery_errors);
  w.scalar(p + ".max_nvlink_crc_errors", "max_nvlink_crc_errors", l.max_nvlink_crc_errors);
  list(out, "xid_fatal", l.xid_fatal);
  list(out, "xid_ignored", l.xid_ignored);
  list(out, "allowed_clock_events", l.allowed_clock_events);
}

void health_ib(Writer& w, const IbHealthLimits& l) {
  if (!l.link_layers.empty()) list(w.out, "link_layers", l.link_layers);
  list(w.out, "up_states", l.up_states);
  list(w.out, "up_phys_states", l.up_phys_states);
  counters(w.out, "fail_counters", l.fail_counters);
  counters(w.out, "warn_counters", l.warn_counters);
}

void links(Writer& w, const LinkSpec& l) {
  const auto optional = [&](const char* key, const std::optional<double>& value) {
    if (value) w.out << YAML::Key << key << YAML::Value << number(*value);
  };
  optional("write_bw_floor_gb_per_s", l.write_bw_floor_gb_per_s);
  optional("write_bw_bidir_floor_gb_per_s", l.write_bw_bidir_floor_gb_per_s);
  optional("read_bw_floor_gb_per_s", l.read_bw_floor_gb_per_s);
  optional("write_lat_ceiling_us", l.write_lat_ceiling_us);
  w.out << YAML::Key << "max_deficit_pct" << YAML::Value << number(l.max_deficit_pct);
  w.out << YAML::Key << "min_pairs" << YAML::Value << l.min_pairs;
  w.out << YAML::Key << "min_bytes" << YAML::Value << size_text(l.min_bytes);
  counters(w.out, "max_counter_deltas", l.max_counter_deltas);
}

void p2p(Writer& w, const P2pSpec& p) {
  const auto optional = [&](const char* key, const std::optional<double>& value) {
    if (value) w.out << YAML::Key << key << YAML::Value << number(*value);
  };
  optional("pair_floor_gb_per_s", p.pair_floor_gb_per_s);
  optional("pair_latency_ceiling_us", p.pair_latency_ceiling_us);
  w.out << YAML::Key << "max_deficit_pct" << YAML::Value << number(p.max_deficit_pct);
  w.out << YAML::Key << "max_asymmetry_pct" << YAML::Value << number(p.max_asymmetry_pct);
  w.out << YAML::Key << "min_pairs" << YAML::Value << p.min_pairs;
  w.out << YAML::Key << "host_min_pcie_pct" << YAML::Value << number(p.host_min_pcie_pct);
  optional("host_floor_gb_per_s", p.host_floor_gb_per_s);
  optional("host_remote_floor_gb_per_s", p.host_remote_floor_gb_per_s);
  optional("device_local_floor_gb_per_s", p.device_local_floor_gb_per_s);
}

// The header comment, one comment per line: a newline inside a comment would end it.
void header_comment(YAML::Emitter& out, const std::map<std::string, std::string>& comments) {
  const auto it = comments.find("");
  if (it == comments.end()) return;
  std::string_view text = it->second;
  while (!text.empty()) {
    const auto end = text.find('\n');
    out << YAML::Comment(std::string(text.substr(0, end))) << YAML::Newline;
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  }
}

// A collective's own settings: min_bytes, require_check, straggler, pairs.
void collective_spec(Writer& w, const std::string& path, const CollectiveSpec& spec) {
  auto& out = w.out;
  w.scalar(path + ".min_bytes", "min_bytes", size_text(spec.min_bytes));
  w.scalar(path + ".require_check", "require_check", spec.require_check);
  if (spec.straggler) {
    out << YAML::Key << "straggler" << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "min_lead_pct" << YAML::Value << number(spec.straggler->min_lead_pct);
    out << YAML::Key << "min_share_pct" << YAML::Value << number(spec.straggler->min_share_pct);
    out << YAML::Key << "min_records" << YAML::Value << spec.straggler->min_records;
    out << YAML::EndMap;
  }
  if (spec.pairs != PairSpec{}) {
    out << YAML::Key << "pairs" << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "max_deficit_pct" << YAML::Value << number(spec.pairs.max_deficit_pct);
    if (spec.pairs.floor_gb_per_s) {
      out << YAML::Key << "floor_gb_per_s" << YAML::Value << number(*spec.pairs.floor_gb_per_s);
    }
    out << YAML::Key << "min_pairs" << YAML::Value << spec.pairs.min_pairs;
    out << YAML::EndMap;
  }
}

// A check's metric bounds; those under a shared parent key (busbw_gb_per_s.node,
// tflops.gemm_bf16) are grouped.
void check_bounds(Writer& w, const std::string& path,
                  const std::vector<std::pair<MetricInfo, const Bound*>>& bounds,
                  const FleetSpec& fleet) {
  std::string open_parent;
  for (const auto& [info, bound] : bounds) {
    const auto dot = info.yaml_path.find('.');
    const std::string parent = dot == std::string::npos ? "" : info.yaml_path.substr(0, dot);
    const std::string leaf =
        dot == std::string::npos ? info.yaml_path : info.yaml_path.substr(dot + 1);
    if (parent != open_parent) {
      if (!open_parent.empty()) w.end();
      if (!parent.empty()) w.begin(fmt::format("{}.{}", path, parent), parent);
      open_parent = parent;
    }
    w.bound(path + "." + info.yaml_path, leaf, *bound, fleet);
  }
  if (!open_parent.empty()) w.end();
}

// One check's entry under `checks`, when the baseline says anything about it.
void check_entry(Writer& w, const Baseline& b, const CheckInfo& check) {
  const std::string id(check.id);
  const std::string path = "checks." + id;
  std::vector<std::pair<MetricInfo, const Bound*>> bounds;
  for (const auto& [metric, bound] : b.bounds) {
    const auto info = metric_info(metric);
    if (info && info->check == id) bounds.emplace_back(*info, &bound);
  }
  const CollectiveSpec* spec = b.collective(id);
  const bool health = check.kind == CheckKind::kHealthGpu || check.kind == CheckKind::kHealthIb;
  const bool link_limits = (check.kind == CheckKind::kLinks && b.links != LinkSpec{}) ||
                           (check.kind == CheckKind::kP2p && b.p2p != P2pSpec{});
  if (bounds.empty() && !spec && !health && !link_limits) return;
  w.begin(path, id);
  if (spec) collective_spec(w, path, *spec);
  if (check.kind == CheckKind::kHealthGpu) health_gpu(w, b.gpu_health);
  if (check.kind == CheckKind::kHealthIb) health_ib(w, b.ib_health);
  if (check.kind == CheckKind::kLinks) links(w, b.links);
  if (check.kind == CheckKind::kP2p) p2p(w, b.p2p);
  check_bounds(w, path, bounds, b.fleet);
  w.end();
}

}  // namespace

std::string baseline_to_yaml(const Baseline& b,
                             const std::map<std::string, std::string>& comments) {
  Writer w(comments);
  auto& out = w.out;
  header_comment(out, comments);
  out << YAML::BeginMap;
  w.scalar("schema", "schema", 1);
  w.scalar("sku", "sku", b.sku);
  if (!b.description.empty()) w.scalar("description", "description", b.description);
  if (b.gpus_per_node || b.ib_ports_per_node || b.nvlinks_per_gpu) {
    w.begin("node", "node");
    if (b.gpus_per_node) w.scalar("node.gpus", "gpus", *b.gpus_per_node);
    if (b.ib_ports_per_node) w.scalar("node.ib_ports", "ib_ports", *b.ib_ports_per_node);
    if (b.nvlinks_per_gpu) w.scalar("node.nvlinks_per_gpu", "nvlinks_per_gpu", *b.nvlinks_per_gpu);
    w.end();
  }
  list(out, "required", b.required);
  w.comment("required");
  w.fleet("fleet", b.fleet);
  w.begin("checks", "checks");
  for (const auto& check : all_checks())
    check_entry(w, b, check);
  w.end();
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace commcert
