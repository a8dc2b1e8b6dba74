#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/record.hpp"
#include "validate/string_pool.hpp"

namespace commcert {

// The records, reduced to what rules read. A million records must fit in well under a GiB, so
// names are interned ids and only failing or non-ok records keep their text.
using NodeId = StringId;  // an id in Evidence::nodes

// Where a record came from: the index of its file in Evidence::files and its 1-based line.
struct EvidenceRef {
  std::uint32_t file = 0;
  std::uint32_t line = 0;
};

struct GpuKey {
  int index = -1;             // -1: the record names no GPU (host backend, skipped stage)
  StringId uuid = kNoString;  // in Evidence::strings
};

// kind `run`: the rank map that names every rank's node.
struct RunEvidence {
  StringId run_id = kNoString;
  std::vector<NodeId> rank_nodes;  // global rank -> node; empty without a run record
  std::vector<NodeId> nodes;       // distinct participants, ascending
  bool has_rank_map = false;
  EvidenceRef ref;
};

// kPairs: two nodes of a pairwise round (judged by localization, not by the metric rules).
// kGroups: node groups of a bisection round (`sweep --groups`), judged by bisection alone.
enum class CollectiveScope : std::uint8_t { kCluster, kNode, kPairs, kGroups, kOther };

struct WrongRank {
  int rank = 0;
  NodeId node = kNoString;
  std::int64_t elements = 0;
  std::int64_t iterations = 0;
};

// kind `collective` with status ok, fail or skipped.
// Most records of a fleet are collectives (8.6 M of 10 M): the members are ordered so that none
// needs padding, 80 bytes.
struct CollectiveEvidence {
  EvidenceRef ref;
  std::uint32_t run = 0;  // index in Evidence::runs
  NodeId writer = kNoString;
  std::uint64_t bytes = 0;
  double busbw_bytes_per_s = 0;  // meaningful when measured()
  StringId collective = kNoString;
  std::int32_t round = -1;   // pairs and groups scopes: the round; -1: not recorded
  std::uint32_t nranks = 0;  // 0: not recorded
  NodeId straggler = kNoString;
  int straggler_rank = -1;
  float straggler_lead_fraction = 0;  // lead_s / median rank time
  std::uint32_t wrong_begin = 0;      // wrong ranks: Evidence::wrong_ranks[begin, begin + count)
  std::uint32_t wrong_count = 0;
  std::uint32_t group = kNoString;  // the record's `group_nodes`, an index in Evidence::groups
  StringId reason = kNoString;
  RecordStatus status = RecordStatus::kOk;
  CollectiveScope scope = CollectiveScope::kCluster;
  bool in_place = false;
  bool checked = false;
  bool pair_list = false;  // a pair named by `sweep --pair-list` (a localization re-test)

  [[nodiscard]] bool measured() const {
    return status == RecordStatus::kOk || status == RecordStatus::kFail;
  }
};
static_assert(sizeof(CollectiveEvidence) <= 80);

// A measured collective whose `--target-ci` was not reached (its `adaptive` block): the interval
// asked for and the one reached (nullopt: too few samples for one), and what stopped it.
struct CiMiss {
  EvidenceRef ref;
  std::uint32_t run = 0;
  StringId collective = kNoString;
  std::uint64_t bytes = 0;
  double target_pct = 0;
  std::optional<double> achieved_pct;
  StringId stopped_by = kNoString;
};

// kind `collective`, status `timeout`.
struct TimeoutEvidence {
  EvidenceRef ref;
  std::uint32_t run = 0;
  NodeId writer = kNoString;
  CollectiveScope scope = CollectiveScope::kCluster;
  std::string operation;
  double timeout_s = 0;
  bool attributed = false;
  std::vector<std::pair<int, NodeId>> not_arrived;  // (rank, node)
  std::vector<NodeId> members;                      // nodes of rank_states, ascending
  std::string reason;
};

// A record with status error (or an unmeasured fail) that names no measurement.
struct StageError {
  EvidenceRef ref;
  std::uint32_t run = 0;
  NodeId node = kNoString;
  std::string reason;
  RecordStatus status = RecordStatus::kError;
};

struct ThrottleEvidence {
  StringId reason = kNoString;
  double seconds = 0;
};

struct XidEvidence {
  int xid = 0;
  StringId time = kNoString;
};

// kind `burn`, one per GPU.
struct BurnEvidence {
  EvidenceRef ref;
  NodeId node = kNoString;
  GpuKey gpu;
  RecordStatus status = RecordStatus::kOk;
  StringId kernel = kNoString;
  std::optional<double> tflops;
  std::int64_t miscompares = 0;
  std::optional<bool> peer_mismatch;
  int peer_gpus = 0;
  std::vector<ThrottleEvidence> throttle;
  std::vector<XidEvidence> xids;
  std::string reason;
};

// kind `membw`, one per GPU. Bandwidths in bytes/s.
struct MembwEvidence {
  EvidenceRef ref;
  NodeId node = kNoString;
  GpuKey gpu;
  RecordStatus status = RecordStatus::kOk;
  std::optional<double> read, write, copy, memcpy_d2d, h2d, d2h;
  std::optional<std::int64_t> integrity_errors;
  std::optional<std::int64_t> bytes_tested;
  std::string first_error;  // "offset 0x1000 pattern walking_ones" for the message
  std::string reason;
};

// A count from a record, or none (null, absent): what std::optional<std::int64_t> holds in half
// its size, none being a value no count can take (a count below zero refuses its record). A
// fleet of 40,960 nodes reports four of them for each of 18 NVLinks of 327,680 GPUs.
class OptionalCount {
 public:
  constexpr OptionalCount() = default;
  constexpr OptionalCount(std::nullopt_t /*none*/) {}  // NOLINT(google-explicit-constructor)
  // NOLINTNEXTLINE(google-explicit-constructor): assigned from what the reader reads
  constexpr OptionalCount(std::optional<std::int64_t> count) : count_(count.value_or(kNone)) {}

  [[nodiscard]] constexpr bool has_value() const { return count_ != kNone; }
  constexpr explicit operator bool() const { return has_value(); }
  [[nodiscard]] constexpr std::int64_t value_or(std::int64_t fallback) const {
    return has_value() ? count_ : fallback;
  }
  [[nodiscard]] constexpr std::optional<std::int64_t> get() const {
    return has_value() ? std::optional<std::int64_t>(count_) : std::nullopt;
  }
  friend constexpr bool operator==(const OptionalCount& a, const std::optional<std::int64_t>& b) {
    return a.get() == b;
  }
  friend constexpr bool operator==(const OptionalCount& a, std::nullopt_t /*none*/) {
    return !a.has_value();
  }

 private:
  static constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::min();
  std::int64_t count_ = kNone;
};

// 40 bytes (72 with std::optional counts): the NVLinks of a 40,960-node fleet take 225 MiB.
struct NvlinkEvidence {
  int link = 0;
  std::optional<bool> active;
  OptionalCount replay_errors, recovery_errors, crc_flit_errors, crc_data_errors;
};
static_assert(sizeof(NvlinkEvidence) == 40);

// kind `health`, component `gpu`.
struct GpuHealthEvidence {
  EvidenceRef ref;
  NodeId node = kNoString;
  GpuKey gpu;
  RecordStatus status = RecordStatus::kOk;
  std::optional<std::int64_t> ecc_volatile_uncorrected, ecc_volatile_corrected;
  std::optional<std::int64_t> remap_correctable, remap_uncorrectable;
  std::optional<bool> remap_pending, remap_failure;
  std::optional<std::int64_t> retired_single_bit, retired_double_bit;
  std::optional<bool> retired_pending;
  std::optional<int> pcie_gen, pcie_gen_max, pcie_width, pcie_width_max;
  // A current generation or width the record gives as 0 or less: no reading (pcie_gen and
  // pcie_width are then nullopt), which certifies nothing whatever the link is held to.
  std::optional<int> pcie_gen_not_read, pcie_width_not_read;
  std::optional<std::int64_t> pcie_replays;
  std::optional<std::vector<NvlinkEvidence>> nvlinks;  // nullopt: the record had no NVLink data
  std::optional<double> temperature_c;
  std::vector<StringId> clock_events;
  std::vector<XidEvidence> xids;
  bool lost = false;  // NVML: the GPU fell off the bus
  // A DCGM diagnostic's verdict (`source: "dcgm"`) and the run level that produced it (nullopt:
  // the record does not say); a baseline requires a level of it (docs/validator.md).
  bool from_dcgm = false;
  std::optional<int> dcgm_level;
  std::string reason;
};

// kind `health`, component `ib_port`.
struct IbPortEvidence {
  EvidenceRef ref;
  NodeId node = kNoString;
  RecordStatus status = RecordStatus::kOk;
  StringId device = kNoString;
  int port = 0;
  StringId state = kNoString;
  StringId phys_state = kNoString;
  StringId link_layer = kNoString;
  std::optional<double> rate_gbps;
  std::vector<std::pair<StringId, std::int64_t>> counters;
  std::string reason;
};

// A port counter that grew while a link test ran (kind `link`, `counter_deltas`).
struct LinkCounterEvidence {
  NodeId node = kNoString;
  StringId device = kNoString;
  int port = 0;
  StringId counter = kNoString;
  std::int64_t delta = 0;
  bool saturated = false;  // at its maximum after the test: the delta is only a lower bound
};

// kind `link`: one link test between two nodes on one rail (docs/links.md). A record that
// measured nothing (skipped, error) names one node or two.
struct LinkEvidence {
  EvidenceRef ref;
  std::uint32_t run = 0;
  NodeId writer = kNoString;
  RecordStatus status = RecordStatus::kOk;
  StringId transport = kNoString;
  StringId memory = kNoString;
  StringId test = kNoString;  // kNoString: the record tested nothing
  int rail = -1;
  NodeId from = kNoString;  // nodes[0]: the initiator
  NodeId to = kNoString;    // nodes[1]; kNoString for a record about one node
  std::uint64_t bytes = 0;
  std::optional<double> bytes_per_s;
  std::optional<double> latency_s;
  std::vector<LinkCounterEvidence> counters;  // only counters that grew or are saturated
  std::string reason;

  [[nodiscard]] bool measured() const {
    return (status == RecordStatus::kOk || status == RecordStatus::kFail) && test != kNoString &&
           to != kNoString;
  }
};

// kind `p2p`: one copy or latency measurement inside a node (docs/p2p.md). GPUs by node-wide
// index, -1 for host memory. A record that measured nothing (skipped, error) may name no path.
struct P2pEvidence {
  EvidenceRef ref;
  std::uint32_t run = 0;
  NodeId node = kNoString;
  GpuKey gpu;  // the GPU whose engine or SMs ran the work
  RecordStatus status = RecordStatus::kOk;
  StringId path = kNoString;  // gpu_gpu, host_gpu, device_local
  StringId method = kNoString;
  StringId access = kNoString;
  bool bidirectional = false;
  int src_gpu = -1;
  int dst_gpu = -1;
  std::optional<int> host_numa_node;
  std::optional<bool> host_numa_local;
  std::optional<bool> peer_access;
  std::uint64_t bytes = 0;
  std::optional<double> bytes_per_s;
  std::optional<double> latency_s;
  std::string reason;

  [[nodiscard]] bool measured() const {
    return (status == RecordStatus::kOk || status == RecordStatus::kFail) && path != kNoString &&
           (bytes_per_s || latency_s);
  }
  // The one GPU a host<->GPU or device-local figure is of (the end that is not the host).
  [[nodiscard]] int own_gpu() const {
    return src_gpu >= 0 ? src_gpu : dst_gpu >= 0 ? dst_gpu : gpu.index;
  }
};

// kind `health`, component `node`.
struct NodeHealthEvidence {
  EvidenceRef ref;
  NodeId node = kNoString;
  RecordStatus status = RecordStatus::kOk;
  std::optional<int> gpu_count;
  std::optional<int> ib_port_count;
  std::string reason;
};

// A record whose status is fail, error or timeout, of any kind (an unknown kind too): evidence
// of a fault, which weighs on the nodes it names whatever else passed (docs/validator.md,
// "Evidence of a fault"). The reader keeps whom it names; finish() resolves them into `nodes`.
struct FaultRecord {
  EvidenceRef ref;
  std::uint32_t run = 0;
  RecordStatus status = RecordStatus::kError;
  StringId kind = kNoString;  // the record's kind, in Evidence::strings
  // The check it is about (collective.allreduce, burn, health.gpu, links, ...); the record's
  // kind where it names none (a collective error without `collective`, a health stage failure).
  std::string check;
  GpuKey gpu;
  // Whom it names: these nodes (its host, a link's ends), its `group_nodes`, every node of its
  // run, and global ranks through its run's rank map.
  std::vector<NodeId> named;
  std::uint32_t group = kNoString;  // an index in Evidence::groups
  bool whole_run = false;
  std::vector<int> ranks;
  // The nodes it blames by name (`wrong_ranks`, `not_arrived`): the fault weighs on them alone,
  // unless `blames_all_or_none` and they are every node it names (wrong data that spread
  // through a reduction blames nobody).
  std::vector<NodeId> culprits;
  bool blames_all_or_none = false;
  // Whether a rule of the record's own kind judges it and cites it, for every node it weighs on
  // (wrong data, a rank that never arrived) or for its host (a failed burn, membw or health
  // record, a lost GPU); rule.fault_evidence judges it for every other node.
  enum class KindRule : std::uint8_t { kNone, kHost, kAll };
  KindRule judged_by = KindRule::kNone;
  NodeId host = kNoString;
  std::string reason;
  std::vector<NodeId> nodes;  // the nodes the fault weighs on, ascending (finish())
};

// Something about the input itself. Issues whose code is in the reason catalog
// (input.unparsable, input.truncated, input.unsupported_schema) make the nodes they touch
// inconclusive; the others are notes in the verdict.
struct InputIssue {
  std::string code;
  EvidenceRef ref;
  std::string detail;
  NodeId node = kNoString;        // the node the lost record was about, when readable
  std::uint32_t run = kNoString;  // else the run it belonged to, when readable
};

struct InputFileSummary {
  std::string path;
  std::size_t lines = 0;
  std::size_t records = 0;
  std::size_t duplicates = 0;
  std::size_t unreadable = 0;
  bool truncated = false;
  // Why the run this file belongs to is known not to have finished ("meta.json says running");
  // empty when it finished or nothing says. Its evidence makes no node certified unless
  // `partial_allowed` (certify --allow-partial).
  std::string unfinished{};
  bool partial_allowed = false;
  // What the run's meta.json (else suite.json) says of itself: `status` of the latest command
  // and of every earlier one ("ok", "fail", ...); empty when there is no such file or field.
  std::string meta_path{};
  std::vector<std::string> meta_statuses{};
  // The first fault status (fail, error, timeout) the run's own meta.json gives, which the
  // stages set from what they recorded; empty when none. (suite.json's status is the verdict's,
  // which may be `fail` with every record ok, so it does not count here.)
  std::string meta_fault_status{};

  // The run says nothing went wrong: every status its meta.json (or suite.json) gives is `ok`.
  [[nodiscard]] bool says_it_went_well() const {
    if (meta_statuses.empty()) return false;
    for (const auto& status : meta_statuses) {
      if (status != "ok") return false;
    }
    return true;
  }
};

struct Evidence {
  StringPool nodes;    // node identities
  StringPool strings;  // run ids, collective and kernel names, uuids, states, reasons
  std::vector<InputFileSummary> files;
  std::vector<RunEvidence> runs;
  std::vector<CollectiveEvidence> collectives;
  std::vector<WrongRank> wrong_ranks;
  std::vector<CiMiss> ci_misses;  // few: only measurements that missed their target CI
  std::vector<TimeoutEvidence> timeouts;
  std::vector<StageError> collective_errors;
  std::vector<BurnEvidence> burns;
  std::vector<MembwEvidence> membws;
  std::vector<GpuHealthEvidence> gpu_health;
  std::vector<IbPortEvidence> ib_ports;
  std::vector<NodeHealthEvidence> node_health;
  std::vector<LinkEvidence> links;
  std::vector<P2pEvidence> p2p;
  std::vector<InputIssue> issues;
  std::vector<std::vector<NodeId>> file_nodes;  // per file: nodes it holds evidence about
  // Distinct `group_nodes` lists of collective records (ascending node ids): a node-scope sweep
  // has one per node, a cluster-wide one a single list of every node.
  std::vector<std::vector<NodeId>> groups;
  // Health records that name no component (a stage that timed out or failed before looking).
  std::vector<StageError> health_failures;
  // Every record of a fault, of any kind, in reading order.
  std::vector<FaultRecord> faults;

  // The run with this id, created on first use.
  std::uint32_t run_index(std::string_view run_id);
  // The nodes a collective measurement speaks for: its `group_nodes` when the record has them,
  // else its writer for scope `node`, else the run's participants (rank map).
  [[nodiscard]] std::span<const NodeId> participants(const CollectiveEvidence& record) const;
  // One value per communicator a record was measured in (its group, else its writer for scope
  // node, else its run's), for grouping records of one communicator within a run.
  [[nodiscard]] static std::uint64_t communicator(const CollectiveEvidence& record);
  // The index of a `group_nodes` list (sorted and deduplicated here), created on first use.
  std::uint32_t group_index(std::vector<NodeId> members);
  [[nodiscard]] std::span<const WrongRank> wrong_ranks_of(const CollectiveEvidence& record) const {
    return std::span(wrong_ranks).subspan(record.wrong_begin, record.wrong_count);
  }
  [[nodiscard]] const std::string& node_name(NodeId id) const { return nodes.at(id); }
  [[nodiscard]] std::string_view text(StringId id) const {
    return id == kNoString ? std::string_view() : std::string_view(strings.at(id));
  }
  // Completes participant lists and per-file node lists once every file is read.
  void finish();

 private:
  // Resolves whom each record of a fault names into the nodes it weighs on (FaultRecord::nodes).
  void resolve_faults();

  std::unordered_map<StringId, std::uint32_t> run_by_id_;
  std::map<std::vector<NodeId>, std::uint32_t> group_by_nodes_;
};

}  // namespace commcert
