#include "fleet_generator.hpp"

#include <algorithm>
#include <fstream>
#include <random>

#include <fmt/format.h>

#include "core/json.hpp"
#include "core/record.hpp"

namespace commcert::fixtures {
namespace {

namespace fs = std::filesystem;

// One run directory. Its meta.json says how the run ended as commcert's stages do: `ok`, or
// the worst status among its records (timeout, then error, then fail), so a planted fault is
// one the run owns up to.
class Writer {
 public:
  Writer(const fs::path& root, std::string run) : run_(std::move(run)) {
    dir_ = root / run_;
    fs::create_directories(dir_);
    out_.open(dir_ / "records.jsonl", std::ios::trunc);
  }
  ~Writer() {
    std::ofstream meta(dir_ / "meta.json");
    const Json status = {
        {"schema", 1}, {"run_id", run_}, {"status", status_}, {"fault_injection", nullptr}};
    meta << status.dump() << "\n";
  }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  void write(const Json& record) {
    out_ << record.dump() << '\n';
    ended(record);
  }
  // The last line cut in half and no newline: what a crash mid-write leaves.
  void write_truncated(const Json& record) {
    const std::string line = record.dump();
    out_ << line.substr(0, line.size() / 2);
  }
  [[nodiscard]] const std::string& run() const { return run_; }
  [[nodiscard]] const fs::path& dir() const { return dir_; }

 private:
  void ended(const Json& record) {
    static const std::vector<std::string> kWorstFirst = {"timeout", "error", "fail"};
    const std::string status = record.value("status", "ok");
    const auto rank = [&](const std::string& s) {
      const auto it = std::find(kWorstFirst.begin(), kWorstFirst.end(), s);
      return it == kWorstFirst.end() ? kWorstFirst.size() : std::size_t(it - kWorstFirst.begin());
    };
    if (rank(status) < rank(status_)) status_ = status;
  }

  std::string run_;
  fs::path dir_;
  std::ofstream out_;
  std::string status_ = "ok";
};

class Generator {
 public:
  explicit Generator(const FleetSpec& spec) : spec_(spec), rng_(spec.seed) {}

  double noisy(double value) {
    std::uniform_real_distribution<double> d(-spec_.noise_pct / 100.0, spec_.noise_pct / 100.0);
    return value * (1.0 + d(rng_));
  }

  [[nodiscard]] const Fault* fault(FaultKind kind, int node, int gpu = -1, int port = -1) const {
    for (const auto& f : spec_.faults) {
      if (f.kind != kind || f.node != node) continue;
      if (gpu >= 0 && f.gpu != gpu) continue;
      if (port >= 0 && f.port != port) continue;
      return &f;
    }
    return nullptr;
  }
  [[nodiscard]] bool any(FaultKind kind) const {
    return std::any_of(spec_.faults.begin(), spec_.faults.end(),
                       [&](const Fault& f) { return f.kind == kind; });
  }

  [[nodiscard]] int gpus(int node) const {
    return spec_.gpus_per_node - (fault(FaultKind::kGpuMissing, node) ? 1 : 0);
  }

  Json origin(const std::string& run, int node, int gpu, std::string_view kind,
              RecordStatus status) {
    RecordOrigin o;
    o.run_id = run;
    o.host = node_name(spec_, node);
    o.rank = node * spec_.gpus_per_node + std::max(gpu, 0);
    o.local_rank = std::max(gpu, 0);
    if (gpu >= 0)
      o.gpu = GpuIdentity{gpu, uuid(node, gpu), fmt::format("0000:{:02x}:00.0", 0x18 + gpu),
                          "NVIDIA H100 80GB HBM3"};
    return make_record(o, kind, status);
  }

  static std::string uuid(int node, int gpu) { return fmt::format("GPU-{:08x}-{:04x}", node, gpu); }

  Json run_record(const std::string& run, int nodes_in_run, int first_node) {
    Json record = origin(run, first_node, -1, "run", RecordStatus::kOk);
    record["command"] = "synthetic";
    record["backend"] = "nccl";
    Json ranks = Json::array();
    for (int n = 0; n < nodes_in_run; ++n) {
      for (int g = 0; g < spec_.gpus_per_node; ++g) {
        const int rank = static_cast<int>(ranks.size());
        ranks.push_back({{"rank", rank},
                         {"process", rank},
                         {"node", node_name(spec_, first_node + n)},
                         {"hostname", node_name(spec_, first_node + n)},
                         {"local_rank", g},
                         {"pid", 1000 + rank},
                         {"device", fmt::format("cuda:{}", g)},
                         {"gpu", nullptr}});
      }
    }
    record["ranks"] = std::move(ranks);
    return record;
  }

  void health(Writer& w) {
    Json truncated;
    for (int n = 0; n < spec_.nodes; ++n) {
      Json node = origin(w.run(), n, -1, "health", RecordStatus::kOk);
      node["component"] = "node";
      node["gpu_count"] = gpus(n);
      node["ib_port_count"] = spec_.ib_ports;
      node["affinity"] = Json::array();
      w.write(node);
      for (int g = 0; g < gpus(n); ++g) {
        Json r = origin(w.run(), n, g, "health", RecordStatus::kOk);
        r["component"] = "gpu";
        r["name"] = "NVIDIA H100 80GB HBM3";
        r["uuid"] = uuid(n, g);
        const auto* ecc = fault(FaultKind::kEcc, n, g);
        r["ecc"] = {{"enabled", true},
                    {"volatile",
                     {{"corrected", 0}, {"uncorrected", ecc ? static_cast<int>(ecc->amount) : 0}}},
                    {"aggregate", {{"corrected", 3}, {"uncorrected", 0}}}};
        r["remapped_rows"] = {{"correctable", 0},
                              {"uncorrectable", 0},
                              {"pending", fault(FaultKind::kRemapPending, n, g) != nullptr},
                              {"failure", fault(FaultKind::kRemapFailure, n, g) != nullptr}};
        r["retired_pages"] = nullptr;
        r["pcie"] = {{"gen_current", 5},
                     {"gen_max", 5},
                     {"width_current", fault(FaultKind::kPcieDowngrade, n, g) ? 8 : 16},
                     {"width_max", 16},
                     {"replay_count", 0}};
        Json links = Json::array();
        for (int l = 0; l < 18; ++l) {
          const auto* down = fault(FaultKind::kNvlinkDown, n, g, l);
          const auto* errors = fault(FaultKind::kNvlinkErrors, n, g, l);
          links.push_back({{"link", l},
                           {"active", down == nullptr},
                           {"replay_errors", errors ? 12 : 0},
                           {"recovery_errors", 0},
                           {"crc_flit_errors", 0},
                           {"crc_data_errors", 0}});
        }
        r["nvlink"] = std::move(links);
        r["temperature_c"] = noisy(Nominal::kTemperature);
        r["power_w"] = 70.0;
        r["clocks_mhz"] = {{"sm", 1980}, {"mem", 2619}, {"sm_max", 1980}, {"mem_max", 2619}};
        r["clock_event_reasons"] = fault(FaultKind::kThrottle, n, g)
                                       ? Json::array({"gpu_idle", "hw_slowdown"})
                                       : Json::array({"gpu_idle"});
        r["persistence_mode"] = true;
        Json xids = Json::array();
        if (const auto* x = fault(FaultKind::kXid, n, g)) {
          xids.push_back(
              {{"xid", static_cast<int>(x->amount)}, {"time", "2026-11-21T10:00:00.000Z"}});
        }
        r["xid_events"] = std::move(xids);
        if (g == 0 && fault(FaultKind::kTruncated, n)) {
          truncated = r;  // written last, cut in half
          continue;
        }
        w.write(r);
      }
      for (int p = 0; p < spec_.ib_ports; ++p) {
        Json r = origin(w.run(), n, -1, "health", RecordStatus::kOk);
        r["component"] = "ib_port";
        r["device"] = fmt::format("mlx5_{}", p);
        r["port"] = 1;
        r["state"] = fault(FaultKind::kIbDown, n, -1, p) ? "DOWN" : "ACTIVE";
        r["phys_state"] = fault(FaultKind::kIbDown, n, -1, p) ? "Polling" : "LinkUp";
        const auto* rate = fault(FaultKind::kIbRate, n, -1, p);
        r["rate_gbps"] = rate ? rate->amount : Nominal::kIbRate;
        r["link_layer"] = "InfiniBand";
        const auto* flaps = fault(FaultKind::kIbFlaps, n, -1, p);
        r["counters"] = {{"symbol_error", 0},
                         {"link_downed", flaps ? static_cast<int>(flaps->amount) : 0},
                         {"link_error_recovery", 0},
                         {"port_rcv_errors", 0},
                         {"port_xmit_discards", 0}};
        w.write(r);
      }
    }
    if (!truncated.is_null()) w.write_truncated(truncated);
  }

  void burn(Writer& w) {
    for (int n = 0; n < spec_.nodes; ++n) {
      if (fault(FaultKind::kNoBurn, n)) continue;
      const bool skipped = fault(FaultKind::kBurnSkipped, n) != nullptr;
      if (skipped) {
        Json r = origin(w.run(), n, -1, "burn", RecordStatus::kSkipped);
        r["reason"] = "no NVIDIA driver: libnvidia-ml.so.1 not found";
        w.write(r);
        continue;
      }
      for (int g = 0; g < gpus(n); ++g) {
        if (fault(FaultKind::kBurnError, n, g)) {
          Json r = origin(w.run(), n, g, "burn", RecordStatus::kError);
          r["reason"] = "CUDA error: an illegal memory access was encountered";
          w.write(r);
          continue;
        }
        const auto* miscompare = fault(FaultKind::kBurnMiscompare, n, g);
        const auto* peer = fault(FaultKind::kBurnPeerMismatch, n, g);
        const auto* slow = fault(FaultKind::kBurnSlow, n, g);
        const bool failed = miscompare || peer;
        Json r = origin(w.run(), n, g, "burn", failed ? RecordStatus::kFail : RecordStatus::kOk);
        r["kernel"] = "gemm_bf16";
        r["matrix"] = {{"m", 8192}, {"n", 8192}, {"k", 8192}, {"dtype", "bfloat16"}};
        r["requested_duration_s"] = 60;
        r["duration_s"] = 60.2;
        r["iterations"] = 5000;
        const double tflops = noisy(Nominal::kTflopsBf16) * (1.0 - (slow ? slow->amount : 0.0));
        r["tflops"] = tflops;
        r["tflops_windows"] = {
            {"count", 60}, {"min", tflops * 0.99}, {"p50", tflops}, {"max", tflops * 1.01}};
        r["miscompares"] = miscompare ? 37 : 0;
        r["peer_mismatch"] = peer != nullptr;
        r["peer_gpus"] = gpus(n) - 1;
        Json throttle = Json::array({{{"reason", "sw_power_cap"}, {"seconds", 12.5}}});
        r["telemetry"] = {{"samples", 60},
                          {"interval_s", 1.0},
                          {"power_w", {{"median", 690}, {"max", 700}}},
                          {"power_limit_w", 700},
                          {"throttle", std::move(throttle)},
                          {"ecc_delta", {{"corrected", 0}, {"uncorrected", 0}}},
                          {"xid_events", Json::array()}};
        if (failed) r["reason"] = miscompare ? "37 miscompares" : "result differs from peers";
        w.write(r);
      }
    }
  }

  void membw(Writer& w) {
    for (int n = 0; n < spec_.nodes; ++n) {
      for (int g = 0; g < gpus(n); ++g) {
        const auto* errors = fault(FaultKind::kMembwErrors, n, g);
        const auto* slow = fault(FaultKind::kMembwSlow, n, g);
        Json r = origin(w.run(), n, g, "membw", errors ? RecordStatus::kFail : RecordStatus::kOk);
        const double copy = noisy(Nominal::kCopy) * (1.0 - (slow ? slow->amount : 0.0));
        r["bandwidth"] = {{"read_bytes_per_s", copy * 1.05},
                          {"write_bytes_per_s", copy * 1.02},
                          {"copy_bytes_per_s", copy},
                          {"memcpy_d2d_bytes_per_s", copy * 0.9},
                          {"datasheet_peak_bytes_per_s", 3.35e12}};
        r["fraction_of_peak"] = copy * 1.05 / 3.35e12;
        r["fraction_of_memcpy"] = 1.0 / 0.9;
        r["host_transfer"] = {{"h2d_bytes_per_s", noisy(Nominal::kH2d)},
                              {"d2h_bytes_per_s", noisy(Nominal::kH2d)},
                              {"numa_node", g / 4},
                              {"pinned", true}};
        Json first = Json::array();
        if (errors)
          first.push_back({{"offset", 4096},
                           {"expected", "0xffffffff"},
                           {"actual", "0xfffffffe"},
                           {"pattern", "walking_ones"}});
        r["integrity"] = {{"bytes_tested", std::uint64_t{64} << 30},
                          {"patterns", {"walking_ones", "random"}},
                          {"errors", errors ? 3 : 0},
                          {"first_errors", std::move(first)}};
        if (errors) r["reason"] = "3 memory errors";
        w.write(r);
      }
    }
  }

  Json collective(const std::string& run, int writer_node, const std::string& name,
                  std::uint64_t bytes, bool in_place, std::string_view scope, int first_rank,
                  int nranks, int nodes_in_comm, double busbw, const std::vector<int>& rank_node) {
    const bool everywhere = scope == "cluster" && any(FaultKind::kCorruptEverywhere);
    std::vector<int> wrong;
    for (int r = 0; r < nranks; ++r) {
      const int node = rank_node[static_cast<std::size_t>(r)];
      if (everywhere || (fault(FaultKind::kWrongData, node) && r % spec_.gpus_per_node == 0))
        wrong.push_back(r);
    }
    Json c =
        origin(run, 0, -1, "collective", wrong.empty() ? RecordStatus::kOk : RecordStatus::kFail);
    c["rank"] = first_rank;
    c["backend"] = "nccl";
    c["collective"] = name;
    c["dtype"] = "float";
    c["redop"] = name == "allreduce" || name == "reducescatter" ? Json("sum") : Json(nullptr);
    c["root"] = nullptr;
    c["bytes"] = bytes;
    c["count"] = bytes / 4;
    c["nranks"] = nranks;
    c["nodes"] = nodes_in_comm;
    c["scope"] = scope;
    // As the sweep writes them: process 0 writes every group's record, which names its group.
    Json group_nodes = Json::array();
    Json group_ranks = Json::array();
    for (int r = 0; r < nranks; ++r) {
      group_ranks.push_back(first_rank + r);
      const std::string member = node_name(spec_, rank_node[static_cast<std::size_t>(r)]);
      if (group_nodes.empty() || group_nodes.back() != member) group_nodes.push_back(member);
    }
    c["round"] = nullptr;
    c["group"] = scope == "node" ? writer_node : 0;
    c["group_nodes"] = std::move(group_nodes);
    c["in_place"] = in_place;
    c["cycle"] = 0;
    c["check"] = true;
    c["iterations"] = 20;
    c["warmup_iterations"] = 1;
    c["aggregation"] = "mean";
    const double factor = name == "allreduce" ? 2.0 * (nranks - 1) / nranks
                                              : static_cast<double>(nranks - 1) / nranks;
    const double time = static_cast<double>(bytes) * factor / busbw;
    c["time_s"] = time;
    c["algbw_bytes_per_s"] = busbw / factor;
    c["busbw_bytes_per_s"] = busbw;
    c["bus_factor"] = factor;
    // Rank times: everyone near `time`, except a straggler, who spends least time inside.
    std::vector<double> rank_times(static_cast<std::size_t>(nranks));
    int straggler = static_cast<int>(std::uniform_int_distribution<int>(0, nranks - 1)(rng_));
    double straggler_lead = 0.02;
    for (const auto& f : spec_.faults) {
      if (f.kind == FaultKind::kStraggler && scope == "cluster") {
        straggler = f.node * spec_.gpus_per_node;
        straggler_lead = f.amount;
      }
    }
    for (int r = 0; r < nranks; ++r)
      rank_times[static_cast<std::size_t>(r)] = noisy(time);
    rank_times[static_cast<std::size_t>(straggler)] = time * (1.0 - straggler_lead);
    std::vector<double> sorted = rank_times;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[sorted.size() / 2];
    c["group_ranks"] = std::move(group_ranks);
    c["rank_time_s"] = rank_times;
    c["rank_time"] = {{"min_s", sorted.front()}, {"median_s", median}, {"max_s", sorted.back()}};
    c["straggler"] = {
        {"rank", straggler},
        {"host", node_name(spec_, rank_node[static_cast<std::size_t>(straggler)])},
        {"time_s", rank_times[static_cast<std::size_t>(straggler)]},
        {"lead_s", std::max(0.0, median - rank_times[static_cast<std::size_t>(straggler)])}};
    c["iteration_time"] = {
        {"count", 20},          {"min_s", time * 0.98}, {"p50_s", time}, {"p99_s", time * 1.05},
        {"max_s", time * 1.05}, {"mean_s", time},       {"cv", 0.01}};
    c["wrong_elements"] = wrong.empty() ? 0 : static_cast<int>(wrong.size()) * 512;
    Json wrong_ranks = Json::array();
    for (const int r : wrong) {
      wrong_ranks.push_back({{"rank", first_rank + r},
                             {"host", node_name(spec_, rank_node[static_cast<std::size_t>(r)])},
                             {"wrong_elements", 512},
                             {"wrong_iterations", 20}});
    }
    c["wrong_ranks"] = std::move(wrong_ranks);
    c["adaptive"] = nullptr;
    if (!wrong.empty()) c["reason"] = "wrong elements";
    return c;
  }

  void collectives_node(Writer& w) {
    for (int n = 0; n < spec_.nodes; ++n) {
      const std::vector<int> rank_node(static_cast<std::size_t>(spec_.gpus_per_node), n);
      const auto* slow = fault(FaultKind::kSlowCollective, n);
      for (const auto& name : spec_.collectives) {
        for (const auto bytes : spec_.sizes) {
          for (const bool in_place : {false, true}) {
            const double busbw = noisy(Nominal::kBusbwNode) * (1.0 - (slow ? slow->amount : 0.0));
            w.write(collective(w.run(), n, name, bytes, in_place, "node", n * spec_.gpus_per_node,
                               spec_.gpus_per_node, 1, busbw, rank_node));
          }
        }
      }
    }
  }

  void collectives_cluster(Writer& w) {
    w.write(run_record(w.run(), spec_.nodes, 0));
    std::vector<int> rank_node;
    for (int n = 0; n < spec_.nodes; ++n) {
      for (int g = 0; g < spec_.gpus_per_node; ++g)
        rank_node.push_back(n);
    }
    const int nranks = static_cast<int>(rank_node.size());
    const Fault* hang = nullptr;
    for (const auto& f : spec_.faults) {
      if (f.kind == FaultKind::kHang) hang = &f;
    }
    const bool stuck = any(FaultKind::kStuck);
    double slow = 0;
    for (const auto& f : spec_.faults) {
      if (f.kind == FaultKind::kSlowCluster) slow = f.amount;
    }
    for (const auto& name : spec_.collectives) {
      for (std::size_t s = 0; s < spec_.sizes.size(); ++s) {
        if ((hang || stuck) && s == spec_.sizes.size() - 1) {
          // The last size never completes.
          Json t = origin(w.run(), 0, -1, "collective", RecordStatus::kTimeout);
          t["backend"] = "nccl";
          t["scope"] = "cluster";
          t["operation"] = fmt::format("{} float sum {} B out-of-place", name, spec_.sizes[s]);
          t["timeout_s"] = 300;
          t["nranks"] = nranks;
          Json not_arrived = Json::array();
          if (hang) {
            const int rank = hang->node * spec_.gpus_per_node;
            not_arrived.push_back({{"rank", rank}, {"host", node_name(spec_, hang->node)}});
          }
          t["not_arrived"] = std::move(not_arrived);
          t["attributed"] = true;
          Json states = Json::array();
          for (int r = 0; r < nranks; ++r) {
            states.push_back({{"rank", r},
                              {"host", node_name(spec_, rank_node[static_cast<std::size_t>(r)])},
                              {"responded", true},
                              {"operations_begun", 4},
                              {"inside_operation", true}});
          }
          t["rank_states"] = std::move(states);
          t["reason"] =
              hang ? fmt::format("rank {} ({}) did not arrive", hang->node * spec_.gpus_per_node,
                                 node_name(spec_, hang->node))
                   : "every rank is inside the operation";
          w.write(t);
          return;
        }
        for (const bool in_place : {false, true}) {
          w.write(collective(w.run(), 0, name, spec_.sizes[s], in_place, "cluster", 0, nranks,
                             spec_.nodes, noisy(Nominal::kBusbwCluster) * (1.0 - slow), rank_node));
        }
      }
    }
  }

 private:
  const FleetSpec& spec_;
  std::mt19937_64 rng_;
};

}  // namespace

std::string node_name(const FleetSpec& spec, int node) {
  return fmt::format("{}{}", spec.prefix, node);
}

std::vector<fs::path> write_fleet(const FleetSpec& spec, const fs::path& root) {
  Generator g(spec);
  std::vector<fs::path> dirs;
  const auto stage = [&](std::string run, auto&& body) {
    Writer w(root, std::move(run));
    body(w);
    dirs.push_back(w.dir());
  };
  if (spec.health) stage("health", [&](Writer& w) { g.health(w); });
  if (spec.burn) stage("burn", [&](Writer& w) { g.burn(w); });
  if (spec.membw) stage("membw", [&](Writer& w) { g.membw(w); });
  if (spec.node_scope) stage("collectives-node", [&](Writer& w) { g.collectives_node(w); });
  if (spec.cluster_scope)
    stage("collectives-cluster", [&](Writer& w) { g.collectives_cluster(w); });
  return dirs;
}

}  // namespace commcert::fixtures
