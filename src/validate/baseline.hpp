#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace commcert {

// Fleet-relative judgement of one metric: robust outliers among nodes of the same SKU (all
// nodes judged against one baseline), median and MAD based.
struct FleetSpec {
  bool enabled = true;
  int min_nodes = 8;             // fewer nodes: no fleet judgement (MAD means little)
  double max_deficit_pct = 6.0;  // flagged only when this far below the fleet median ...
  double min_robust_z = 3.5;     // ... and this many robust standard deviations away

  [[nodiscard]] bool operator==(const FleetSpec&) const = default;
};

// The bounds of one metric, in the unit its baseline key names (GB/s, TFLOP/s, Gb/s, C).
struct Bound {
  std::optional<double> floor;
  std::optional<double> ceiling;
  std::optional<double> equals;
  std::optional<double> expected;            // a healthy node's value; regressions are from it
  std::optional<double> warn_band_pct;       // within this % of floor/ceiling: a warning
  std::optional<double> max_regression_pct;  // further below `expected`: quarantine
  FleetSpec fleet;
  std::string source;  // "file:line" where it was declared

  [[nodiscard]] bool operator==(const Bound&) const = default;
};

// A collective is judged on sizes large enough to reach bus bandwidth, and optionally for a
// rank that keeps the others waiting.
struct StragglerSpec {
  double min_lead_pct = 25.0;   // lead over the median rank time that counts as waiting for it
  double min_share_pct = 80.0;  // of the records of one run and collective
  int min_records = 4;          // fewer records than this prove nothing

  [[nodiscard]] bool operator==(const StragglerSpec&) const = default;
};

// How pairwise rounds (scope pairs) are judged: each pair's busbw against the other pairs of
// the same run, collective and size (docs/localization.md).
struct PairSpec {
  double max_deficit_pct = 20.0;         // a pair this far below the reference fails ...
  std::optional<double> floor_gb_per_s;  // ... as does one below this absolute floor
  int min_pairs = 3;                     // fewer pairs: no reference, only the floor judges

  [[nodiscard]] bool operator==(const PairSpec&) const = default;
};

struct CollectiveSpec {
  std::uint64_t min_bytes = std::uint64_t{1} << 30;
  bool require_check = true;
  std::optional<StragglerSpec> straggler;
  PairSpec pairs;

  [[nodiscard]] bool operator==(const CollectiveSpec&) const = default;
};

// A count limit a health rule declares in its own file (rules/*_rule.cpp, Rule::gpu_limits):
// its key under checks.health.gpu and its default. Baselines read and write every declared key,
// so a new health rule with a limit touches its own file, not the baseline's reader or writer.
struct GpuCountLimit {
  std::string_view key;
  std::int64_t default_value = 0;
};

// Every limit the registered rules declare, in the order of the rules' table (registry.cpp).
[[nodiscard]] std::span<const GpuCountLimit> declared_gpu_count_limits();

// Hardware-state limits. The defaults are DCGM's health-watch and AzNHC's limits
// (../shared/reference/validation-anchors.md §2, §3); a baseline may override each.
struct GpuHealthLimits {
  std::int64_t max_uncorrectable_ecc = 0;           // volatile, since the last reset
  std::optional<std::int64_t> max_correctable_ecc;  // warning only
  std::int64_t remapped_rows_warn = 512;            // DCGM: uncorrectable remaps >= 512 warn
  bool pcie_at_max = true;                          // current gen/width must equal the maximum
  std::optional<int> pcie_min_gen;
  std::optional<int> pcie_min_width;
  std::optional<std::int64_t> max_pcie_replays;  // warning only (counters since boot)
  std::int64_t max_nvlink_replay_errors = 0;     // DCGM: any replay/recovery error fails
  std::int64_t max_nvlink_recovery_errors = 0;
  std::int64_t max_nvlink_crc_errors = 0;  // warning only: DCGM judges CRC by rate
  std::vector<int> xid_fatal = {48, 63, 64, 74, 79, 94, 95, 119, 120, 140};
  std::vector<int> xid_ignored = {13, 31, 43, 45, 68};  // application XIDs
  std::vector<std::string> allowed_clock_events = {"sw_power_cap", "gpu_idle"};
  // The rules' own limits by key, every declared one present (its default unless overridden).
  std::map<std::string, std::int64_t, std::less<>> counts = declared_count_defaults();

  // The value of a limit a rule declared.
  [[nodiscard]] std::int64_t count(const GpuCountLimit& limit) const;
  [[nodiscard]] bool operator==(const GpuHealthLimits&) const = default;

 private:
  [[nodiscard]] static std::map<std::string, std::int64_t, std::less<>> declared_count_defaults();
};

struct IbHealthLimits {
  // Ports of these link layers are judged (empty: all). An InfiniBand fabric's baseline leaves
  // out the Ethernet ports of a front-end network, which run at another rate.
  std::vector<std::string> link_layers;
  std::vector<std::string> up_states = {"ACTIVE"};
  std::vector<std::string> up_phys_states = {"LinkUp"};
  // Counter above its limit quarantines (AzNHC: >= 5 link flaps fail) / warns.
  std::map<std::string, std::int64_t> fail_counters = {{"link_downed", 4}};
  std::map<std::string, std::int64_t> warn_counters = {{"symbol_error", 0},
                                                       {"link_error_recovery", 0},
                                                       {"port_rcv_errors", 0},
                                                       {"local_link_integrity_errors", 0},
                                                       {"excessive_buffer_overrun_errors", 0}};

  [[nodiscard]] bool operator==(const IbHealthLimits&) const = default;
  // Whether a port of this link layer is judged (an unknown link layer is).
  [[nodiscard]] bool judges(std::string_view link_layer) const;
};

// How link tests between nodes are judged (docs/links.md): each pair's figure against an
// absolute limit and against the other pairs of the same run, test, size and rail.
struct LinkSpec {
  std::optional<double> write_bw_floor_gb_per_s;
  std::optional<double> write_bw_bidir_floor_gb_per_s;
  std::optional<double> read_bw_floor_gb_per_s;
  std::optional<double> write_lat_ceiling_us;
  // A pair this far worse than the run's reference (the upper quartile of bandwidths, the lower
  // quartile of latencies) is slow; latency: above reference / (1 - pct/100).
  double max_deficit_pct = 50.0;
  int min_pairs = 3;  // fewer pairs in a series: no reference, only the absolute limits judge
  // Bandwidth of smaller messages is latency-bound and not judged.
  std::uint64_t min_bytes = std::uint64_t{1} << 20;
  // A port counter that grows by more than this during a link test quarantines its node.
  std::map<std::string, std::int64_t> max_counter_deltas = {{"symbol_error", 0},
                                                            {"link_downed", 0},
                                                            {"link_error_recovery", 0},
                                                            {"port_rcv_errors", 0},
                                                            {"local_link_integrity_errors", 0},
                                                            {"excessive_buffer_overrun_errors", 0}};

  [[nodiscard]] bool operator==(const LinkSpec&) const = default;
};

// How `p2p` (copies inside a node, docs/p2p.md) is judged. Pairs of GPUs: each figure against
// an absolute floor and against the node's other pairs of the same method, access and direction
// in the same run; host<->GPU from the GPU's own NUMA node: against its PCIe link's rate.
struct P2pSpec {
  std::optional<double> pair_floor_gb_per_s;  // GB/s per direction, every copy method
  std::optional<double> pair_latency_ceiling_us;
  // A pair this far below the node's reference (the upper quartile of its pairs) is slow.
  double max_deficit_pct = 25.0;
  // One direction this far below the other of the same pair, method and access: asymmetric.
  double max_asymmetry_pct = 25.0;
  int min_pairs = 3;  // fewer ordered pairs in a series: no reference, only the floor judges
  // Host<->GPU from the GPU's own NUMA node must reach this % of its PCIe link's rate per
  // direction (the health record's maximum generation and width).
  double host_min_pcie_pct = 75.0;
  // Judges host<->GPU when no health record gives the GPU's PCIe link; without it such a figure
  // is not judged and the node is inconclusive.
  std::optional<double> host_floor_gb_per_s;
  // Host memory on the other socket crosses the CPUs' link, so PCIe's rate does not hold it:
  // each GPU's figure is judged against the node's other GPUs' (max_deficit_pct below their upper
  // quartile, with min_pairs of them) and against this floor where set.
  std::optional<double> host_remote_floor_gb_per_s;
  // Copies within one GPU's memory: each GPU against the node's other GPUs of the same method
  // (as above; pointer-chase latency above the lower quartile / (1 - pct)) and this floor.
  std::optional<double> device_local_floor_gb_per_s;

  [[nodiscard]] bool operator==(const P2pSpec&) const = default;
};

// One SKU's expectations (docs/validator.md "Baselines"). Every node judged against a baseline
// belongs to its fleet.
struct Baseline {
  std::string path;  // where it was read from
  std::string sku;
  std::string description;
  std::optional<int> gpus_per_node;
  std::optional<int> ib_ports_per_node;
  std::optional<int> nvlinks_per_gpu;
  std::vector<std::string> required;  // check ids a node needs positive evidence for
  FleetSpec fleet;                    // defaults for every bound
  std::map<std::string, CollectiveSpec> collectives;  // by check id
  std::map<std::string, Bound> bounds;                // by metric id (metrics.hpp)
  GpuHealthLimits gpu_health;
  IbHealthLimits ib_health;
  LinkSpec links;
  P2pSpec p2p;

  [[nodiscard]] const CollectiveSpec* collective(std::string_view check) const;
  [[nodiscard]] const Bound* bound(std::string_view metric) const;
};

// Throws UsageError "FILE:LINE:COLUMN: key.path: problem" for anything it cannot read: YAML
// syntax, wrong types, unknown keys or checks, inconsistent bounds.
[[nodiscard]] Baseline load_baseline(const std::filesystem::path& path);
[[nodiscard]] Baseline parse_baseline(std::string_view text, std::string_view origin);

// The YAML form load_baseline reads back to an equal Baseline (minus sources); `comments` are
// written above the matching keys ("checks.burn" -> text).
[[nodiscard]] std::string baseline_to_yaml(const Baseline& baseline,
                                           const std::map<std::string, std::string>& comments = {});

}  // namespace commcert
