#include "record_samples.hpp"

#include "bench/burn.hpp"
#include "bench/collective_record.hpp"
#include "bench/membw.hpp"
#include "bench/p2p_plan.hpp"
#include "health/node_health.hpp"
#include "health/telemetry.hpp"
#include "health/telemetry_timeline.hpp"
#include "links/link_measurement.hpp"
#include "records/stage.hpp"

namespace commcert::test_support {
namespace {

// Four ranks, one per node, on a host-memory backend: what `mpirun -np 4 commcert sweep
// --node-name 'node{rank}'` runs on.
std::vector<RankIdentity> four_nodes() {
  std::vector<RankIdentity> ranks;
  for (int r = 0; r < 4; ++r) {
    RankIdentity id;
    id.rank = r;
    id.process = r;
    id.node = "node" + std::to_string(r);
    id.hostname = "ci-host";
    id.local_rank = r;
    id.pid = 4000 + r;
    id.device = "host";
    ranks.push_back(id);
  }
  return ranks;
}

RecordOrigin origin_on(const std::string& run_id, const std::string& host, int rank) {
  RecordOrigin origin;
  origin.run_id = run_id;
  origin.host = host;
  origin.rank = rank;
  origin.local_rank = rank;
  return origin;
}

// Two H200s of one node, as p2p_command.cpp describes them (node-wide indices 0 and 1).
std::vector<GpuIdentity> two_h200s() {
  return {{0, "GPU-5d1e0c2a-0000-4000-8000-000000000000", "0000:1b:00.0", "NVIDIA H200"},
          {1, "GPU-5d1e0c2a-0000-4000-8000-000000000001", "0000:43:00.0", "NVIDIA H200"}};
}

// As p2p_command.cpp writes the streams of the tests it ran (figures plausible for an H200).
std::vector<Json> p2p_records(const std::string& run_id) {
  const auto gpus = two_h200s();
  std::vector<Json> out;
  P2pTest pair;
  pair.method = P2pMethod::kCopyEngine;
  pair.access = P2pAccess::kWrite;
  pair.bidirectional = true;
  pair.peer_access = true;
  pair.streams = {{0, P2pEndpoint::device(0), P2pEndpoint::device(1)},
                  {1, P2pEndpoint::device(1), P2pEndpoint::device(0)}};
  const std::vector<std::vector<double>> pair_samples = {{5.42e-3, 5.40e-3, 5.45e-3},
                                                         {5.44e-3, 5.41e-3, 5.47e-3}};
  for (std::size_t s = 0; s < pair.streams.size(); ++s) {
    P2pStreamResult result;
    result.measurement =
        p2p_measurement(P2pMethod::kCopyEngine, 256ULL << 20, 8, 1, pair_samples[s]);
    out.push_back(to_json(p2p_record(origin_on(run_id, "node0", pair.streams[s].device), pair, s,
                                     gpus, std::move(result))));
  }
  P2pTest host;
  host.path = P2pPath::kHostGpu;
  host.method = P2pMethod::kCopyEngine;
  host.host_numa_local = true;
  host.streams = {{1, P2pEndpoint::host(0), P2pEndpoint::device(1)}};
  P2pStreamResult h2d;
  h2d.measurement =
      p2p_measurement(P2pMethod::kCopyEngine, 256ULL << 20, 8, 1, {38.9e-3, 38.7e-3, 39.0e-3});
  out.push_back(to_json(p2p_record(origin_on(run_id, "node0", 1), host, 0, gpus, std::move(h2d))));
  P2pTest chase;
  chase.path = P2pPath::kDeviceLocal;
  chase.method = P2pMethod::kPointerChase;
  chase.streams = {{0, P2pEndpoint::device(0), P2pEndpoint::device(0)}};
  P2pStreamResult local;
  local.measurement = p2p_measurement(P2pMethod::kPointerChase, 128ULL << 20, 20000, 1,
                                      {1.31e-2, 1.30e-2, 1.32e-2});
  out.push_back(
      to_json(p2p_record(origin_on(run_id, "node0", 0), chase, 0, gpus, std::move(local))));
  P2pTest lone;
  lone.skip_reason = "one GPU";
  lone.skipped_src = 0;
  out.push_back(to_json(p2p_record(origin_on(run_id, "node1", 0), lone, 0, {gpus[0]},
                                   {RecordStatus::kSkipped, "one GPU", {}})));
  return out;
}

Measurement allreduce_64k(bool corrupt_rank_two) {
  Measurement m;
  m.collective = CollectiveKind::kAllReduce;
  m.type = DataType::kFloat;
  m.op = ReduceOp::kSum;
  m.bytes = 65536;
  m.count = 16384;
  m.nranks = 4;
  m.group_nodes = {"node0", "node1", "node2", "node3"};
  m.warmup_iterations = 5;
  m.iteration_seconds = {2.1e-4, 1.9e-4, 2.4e-4, 2.0e-4, 2.2e-4};
  const double rank_seconds[] = {1.8e-4, 2.0e-4, 1.2e-4, 1.9e-4};
  for (int r = 0; r < 4; ++r) {
    RankMeasurement rank;
    rank.rank = r;
    rank.mean_seconds = rank_seconds[r];
    rank.back_to_back_seconds = rank_seconds[r] * 0.9;
    rank.checked = true;
    if (corrupt_rank_two && r == 2) {
      rank.wrong_elements = 80;
      rank.wrong_iterations = 5;
    }
    m.ranks.push_back(rank);
  }
  m.check_requested = true;
  return m;
}

TimeoutReport rank_three_hung() {
  TimeoutReport report;
  report.context = "allreduce float sum 64 KiB out-of-place";
  report.timeout_seconds = 5;
  for (int r = 0; r < 4; ++r) {
    RankTimeoutState state;
    state.rank = r;
    state.responded = true;
    state.operations_begun = r == 3 ? 11 : 12;
    state.inside_operation = r != 3;
    state.idle_seconds = r == 3 ? 5.2 : 0.01;
    report.ranks.push_back(state);
  }
  report.culprit_ranks = {3};
  report.this_process_reports = true;
  return report;
}

GpuIdentity h100(int index) {
  GpuIdentity gpu;
  gpu.index = index;
  gpu.uuid = "GPU-5a1c2e3f-0000-4b5c-9d6e-00000000000" + std::to_string(index);
  gpu.pci_bus_id = index == 0 ? "0000:1b:00.0" : "0000:43:00.0";
  gpu.name = "NVIDIA H100 80GB HBM3";
  return gpu;
}

TelemetrySeries burn_telemetry() {
  TelemetrySeries series;
  series.interval_s = 0.1;
  for (int i = 0; i < 4; ++i) {
    TelemetrySample sample;
    sample.time_s = 0.1 * i;
    sample.sm_clock_mhz = 1980 - 50 * i;
    sample.mem_clock_mhz = 2619;
    sample.power_w = 640.0 + 15 * i;
    sample.temperature_c = 60 + i;
    sample.clock_event_reasons = i == 3 ? 0x4 : 0x0;  // sw_power_cap at the end
    series.samples.push_back(sample);
  }
  series.power_limit_w = 700;
  series.ecc_before = {3, 0};
  series.ecc_after = {3, 0};
  series.xid_events = std::vector<XidEvent>{};
  return series;
}

// As burn_command.cpp writes a measured GPU: a BurnRecord with status, reason and measurement.
Json burn_record(const std::string& run_id, int gpu, std::uint64_t miscompares) {
  BurnSettings settings;
  settings.duration_s = 60;
  BurnOutcome outcome;
  outcome.gpu = h100(gpu);
  outcome.measured = true;
  outcome.duration_s = 60.02;
  outcome.iterations = 31250;
  outcome.window_tflops = {702.5, 711.0, 709.8, 706.1};
  outcome.window_end_s = {15.0, 30.0, 45.0, 60.0};
  outcome.miscompares = miscompares;
  outcome.checked_results = 61;
  outcome.telemetry = telemetry_json(burn_telemetry());
  outcome.timeline = telemetry_timeline_json(burn_telemetry().samples, outcome.window_end_s,
                                             outcome.window_tflops);
  const PeerVerdict peers{miscompares > 0, 1};
  BurnRecord record;
  record.origin = origin_on(run_id, "node0", gpu);
  record.origin.gpu = outcome.gpu;
  record.status = burn_status(outcome, peers);
  if (record.status != RecordStatus::kOk) record.reason = burn_reason(outcome, peers, "node0");
  record.kernel = burn_kernel_name(settings.kernel);
  record.measurement = burn_measurement(settings, outcome, peers, 989.4);
  return to_json(record);
}

// As membw_command.cpp writes a measured GPU.
Json membw_record(const std::string& run_id, int gpu, std::uint64_t integrity_errors) {
  MembwOutcome outcome;
  outcome.gpu = h100(gpu);
  outcome.read_bytes_per_s = 3.02e12;
  outcome.write_bytes_per_s = 2.95e12;
  outcome.copy_bytes_per_s = 2.91e12;
  outcome.memcpy_d2d_bytes_per_s = 2.88e12;
  outcome.buffer_bytes = 4ULL << 30;
  outcome.host_transfer = HostTransfer{5.3e10, 5.1e10, 0, true};
  MemoryIntegrity integrity{8ULL << 30, {"walking_ones", "address", "random"}, 0, {}};
  if (integrity_errors > 0) {
    integrity.errors = integrity_errors;
    integrity.first_errors = {{0x7f3a40, 0xffffffffffffffffULL, 0xfffffffffffffffbULL, "random"}};
  }
  outcome.integrity = integrity;
  MembwRecord record;
  record.origin = origin_on(run_id, "node0", gpu);
  record.origin.gpu = outcome.gpu;
  record.status = membw_status(outcome);
  if (record.status != RecordStatus::kOk) record.reason = membw_reason(outcome);
  record.measurement = membw_measurement(outcome, 3.35e12);
  return to_json(record);
}

GpuHealth healthy_gpu(unsigned index) {
  GpuHealth gpu;
  gpu.index = index;
  const GpuIdentity id = h100(static_cast<int>(index));
  gpu.name = id.name;
  gpu.uuid = id.uuid;
  gpu.pci_bus_id = id.pci_bus_id;
  gpu.serial = "165232100000" + std::to_string(index);
  gpu.vbios = "96.00.99.00.01";
  gpu.driver_version = "580.65.06";
  gpu.ecc = GpuEcc{true, {0, 0}, {12, 0}};
  gpu.remapped_rows = GpuRemappedRows{0, 0, false, false};
  gpu.pcie = GpuPcie{5, 5, 16, 16, 0};
  gpu.nvlink = std::vector<GpuNvLink>{{0, true, 0, 0, 0, 0}, {1, true, 0, 0, std::nullopt, 0}};
  gpu.temperature_c = 34;
  gpu.power_w = 71.5;
  gpu.clocks = GpuClocks{345, 2619, 1980, 2619};
  gpu.clock_event_reasons = std::vector<std::string>{"gpu_idle"};
  gpu.persistence_mode = true;
  gpu.xid_events = std::vector<XidEvent>{{79, "2026-11-22T00:00:01.250Z"}};
  gpu.query_errors = {{"serial", "Insufficient Permissions (NVML error 4)"}};
  return gpu;
}

// A node with two GPUs (one fell off the bus, one has no handle), two IB ports and topology.
NodeHealth scripted_node() {
  NodeHealth node;
  node.gpu_count = 3;
  node.gpus.push_back(healthy_gpu(0));
  GpuHealth lost = healthy_gpu(1);
  lost.lost = true;
  lost.temperature_c.reset();
  node.gpus.push_back(lost);
  GpuHealth unreachable;
  unreachable.index = 2;
  unreachable.unreachable = "nvmlDeviceGetHandleByIndex_v2(2) returned GPU is lost (NVML error 15)";
  unreachable.lost = true;
  node.gpus.push_back(unreachable);
  IbPort port;
  port.device = "mlx5_0";
  port.port = 1;
  port.state = "ACTIVE";
  port.phys_state = "LinkUp";
  port.rate_gbps = 400;
  port.link_layer = "InfiniBand";
  port.counters = {{"link_downed", 0}, {"symbol_error", 3}, {"port_rcv_errors", 0}};
  node.ib.class_present = true;
  node.ib.ports.push_back(port);
  port.device = "mlx5_1";
  port.state.reset();  // an unreadable state file is null, not a guess
  port.rate_gbps.reset();
  node.ib.ports.push_back(port);
  node.topology.available = true;
  node.topology.source = "hwloc 2.9.0";
  node.topology.gpus = {{0, "0000:1b:00.0", 0, {"mlx5_0"}}, {1, "0000:43:00.0", 1, {"mlx5_1"}}};
  node.verbs.built = true;
  node.verbs.devices = {"mlx5_0", "mlx5_1"};
  return node;
}

// A node without a driver or RDMA devices: one skipped record per component it could not look at.
NodeHealth bare_node() {
  NodeHealth node;
  node.nvml_unavailable_reason = "no NVIDIA driver: libnvidia-ml.so.1 not found";
  node.sysfs_root = "/sys";
  return node;
}

}  // namespace

std::vector<RecordSample> record_samples(const std::string& run_id) {
  std::vector<RecordSample> samples;
  const auto ranks = four_nodes();
  CollectiveRecordContext context;
  context.origin = origin_on(run_id, "node0", 0);
  context.backend = "mpi";
  context.aggregation = RankAggregation::kMean;
  context.ranks = &ranks;

  samples.push_back({"collective ok", collective_record(context, allreduce_64k(false))});
  samples.push_back({"collective fail: rank 2 returned wrong elements",
                     collective_record(context, allreduce_64k(true))});
  Measurement rooted = allreduce_64k(false);
  rooted.collective = CollectiveKind::kBroadcast;
  rooted.op.reset();
  rooted.root = 1;
  rooted.adaptive = AdaptiveOutcome{5.0, 3.1, "ci"};
  samples.push_back({"collective ok: rooted, adaptive", collective_record(context, rooted)});
  Measurement pair = allreduce_64k(false);
  pair.nranks = 2;
  pair.scope = "pairs";
  pair.round = 1;
  pair.group = 1;
  pair.pair_list = true;
  pair.group_nodes = {"node1", "node3"};
  pair.ranks = {pair.ranks[1], pair.ranks[3]};
  samples.push_back({"collective ok: a --pair-list pair", collective_record(context, pair)});
  Measurement sendrecv = allreduce_64k(false);
  sendrecv.collective = CollectiveKind::kSendRecv;
  sendrecv.op.reset();
  sendrecv.in_place = true;
  sendrecv.unsupported = "sendrecv has no in-place form on the mpi backend";
  samples.push_back({"collective skipped", collective_record(context, sendrecv)});
  samples.push_back({"collective timeout", timeout_record(context, rank_three_hung())});

  samples.push_back({"burn ok", burn_record(run_id, 0, 0)});
  samples.push_back({"burn fail: miscompares and a peer mismatch", burn_record(run_id, 1, 12)});
  samples.push_back({"membw ok", membw_record(run_id, 0, 0)});
  samples.push_back({"membw fail: integrity errors", membw_record(run_id, 1, 2)});

  // As links_command.cpp writes a measured pair (node1 initiating towards node3) and a lone node.
  const LinkPair link_pair{0, {1, 3}, {"node1", "node3"}};
  samples.push_back(
      {"link ok",
       to_json(link_test_record(
           origin_on(run_id, "node3", 3), "mpi", "host", LinkTest::kWriteBandwidth, 2, link_pair, 1,
           link_measurement(LinkTest::kWriteBandwidth, 4 << 20, 4, 1, {1.5e-3, 1.4e-3, 1.6e-3})))});
  samples.push_back({"link skipped: one node",
                     to_json(lone_link_record(origin_on(run_id, "node0", 0), "mpi", "host", 0,
                                              "one node: no partner to test a link with"))});

  // As stage_session.cpp writes a links stage's timeout: node0 writes it about the link of
  // node1 (which did not arrive) and node3.
  StageTimeoutRecord link_timeout;
  link_timeout.origin = origin_on(run_id, "node0", 0);
  link_timeout.kind = "link";
  link_timeout.reason =
      "process 1 (node1) did not reach 'links: round 2 write_bw 4 MiB "
      "node1->node3' within 60 s";
  link_timeout.nodes = {"node1", "node3"};
  link_timeout.operation = "links: round 2 write_bw 4 MiB node1->node3";
  link_timeout.timeout_s = 60;
  samples.push_back({"link timeout: both ends of the link", to_json(link_timeout)});

  for (auto& record : p2p_records(run_id)) {
    samples.push_back({"p2p " + record.value("status", "?") + " " +
                           (record["path"].is_null() ? "" : record["path"].get<std::string>()),
                       std::move(record)});
  }

  for (auto& record : node_health_records(scripted_node(), origin_on(run_id, "node0", 0))) {
    samples.push_back({"health " + record.value("component", "?") + " " +
                           record.value("status", "?") + " (scripted node)",
                       std::move(record)});
  }
  for (auto& record : node_health_records(bare_node(), origin_on(run_id, "node1", 1))) {
    samples.push_back({"health " + record.value("component", "?") + " " +
                           record.value("status", "?") + " (bare node)",
                       std::move(record)});
  }
  // As stage_session.cpp writes a health stage that failed or timed out as a whole on node2.
  StageTimeoutRecord health_timeout;
  health_timeout.origin = origin_on(run_id, "node2", 2);
  health_timeout.kind = "health";
  health_timeout.reason = "process 3 (node3) did not reach 'finish: gathering records' within 8 s";
  health_timeout.component = "node";
  health_timeout.operation = "finish: gathering records";
  health_timeout.timeout_s = 8;
  samples.push_back({"health node timeout (the stage)", to_json(health_timeout)});
  StageErrorRecord health_error;
  health_error.origin = origin_on(run_id, "node2", 2);
  health_error.kind = "health";
  health_error.reason = "cannot read /sys/class/infiniband: Permission denied";
  health_error.component = "node";
  samples.push_back({"health node error (the stage)", to_json(health_error)});
  return samples;
}

}  // namespace commcert::test_support
