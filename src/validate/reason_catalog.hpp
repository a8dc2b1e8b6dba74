#pragma once

// The reason catalog: every code a rule may raise, with its effect, severity, message and
// action. In a header so that a code is checked against it at compile time (ReasonCode).

#include <span>

#include "validate/reason_spec.hpp"

namespace commcert {
namespace reason_rows {

using enum Effect;
using enum Severity;

// Placeholders every finding may fill: {where} ("gpu 3 (GPU-…): ", "mlx5_0 port 1: " or empty),
// {check}, {detail}; the rest are named by the rule that raises the code.
inline constexpr ReasonSpec kRows[] = {
    // Fail closed: evidence a required check needs and does not have.
    {"evidence.missing", kInconclusive, kUnknown, "{check}: no evidence{detail}",
     "run the stage that produces it on this node, then certify again"},
    {"evidence.error", kInconclusive, kUnknown, "{check}: the stage could not measure{detail}",
     "fix the error named here, rerun the stage, then certify again"},
    {"evidence.skipped", kInconclusive, kUnknown, "{check}: skipped{detail}",
     "run the stage where it can run (GPU driver, RDMA devices present), then certify again"},
    {"evidence.timeout", kInconclusive, kUnknown, "{check}: no complete measurement{detail}",
     "rerun; if the same operation times out again, run per node to find the culprit"},
    {"evidence.unchecked", kInconclusive, kUnknown, "{check}: outputs were never verified{detail}",
     "rerun the sweep with output checks on (-c 1)"},
    {"evidence.not_judgeable", kInconclusive, kUnknown,
     "{check}: no measurement the baseline can judge{detail}",
     "rerun with the sizes and scope the baseline bounds (see its min_bytes and busbw scopes)"},
    {"evidence.dcgm_level", kInconclusive, kUnknown,
     "{check}: a DCGM diagnostic below the level the baseline requires{detail}",
     "run dcgmi diag at the baseline's dcgm_min_level (-r 3 is the long run), ingest it, then "
     "certify again"},
    {"evidence.no_figure", kInconclusive, kUnknown, "{where}{check}: no {metric} figure{detail}",
     "rerun the stage; its record lacks a figure the baseline bounds"},
    // Evidence of a fault that names several nodes and blames none of them.
    {"evidence.fail_unattributed", kInconclusive, kUnknown,
     "{check}: a failure shared by {nodes} nodes, none of them named as its cause{detail}",
     "rerun the stage; with other partners (links) or on each node alone it tells the node at "
     "fault from the others"},
    // Input that could not be read: its evidence is lost, never assumed good.
    {"input.unparsable", kInconclusive, kUnknown,
     "{file}:{line}: unreadable record ({detail}); its evidence is lost",
     "inspect the line; rerun the stage that wrote it"},
    {"input.truncated", kInconclusive, kUnknown,
     "{file}:{line}: truncated last record (the writer stopped mid-line); its evidence is lost",
     "rerun the stage on this node; it probably crashed or lost power"},
    {"input.unsupported_schema", kInconclusive, kUnknown,
     "{file}:{line}: record schema {detail} is newer than this validator reads",
     "judge these results with a newer commcert"},
    {"input.run_unfinished", kInconclusive, kUnknown,
     "{file}: {detail}; its evidence certifies no node",
     "let the run finish or rerun it, then certify again (certify --allow-partial judges what it "
     "holds)"},
    {"input.meta_disagrees", kInconclusive, kUnknown,
     "{file} says the run went well, but {detail}; the run's account of itself cannot be "
     "trusted",
     "read the run's log for the fault its status missed, rerun the stage, then certify again"},
    {"input.meta_fault_unrecorded", kInconclusive, kUnknown,
     "{file} says a stage ended with status {status}, but no record in {records} is of a fault: "
     "what went wrong left no record, so the records are not the whole account",
     "read the run's log (stderr of the failed stage), rerun the suite, then certify again"},
    {"input.run_partial", kWarn, kMonitor,
     "{file}: {detail}; judged anyway (--allow-partial): missing evidence is judged as missing",
     "rerun the suite to completion when the node can be spared"},
    // Correctness: wrong answers are never noise.
    {"collective.wrong_data", kQuarantine, kIsolate,
     "{collective}: {elements} wrong elements from rank {ranks} in {records} record(s), first at "
     "{size} {placement} (run {run})",
     "drain; run burn and membw on this node to find the GPU; replace it if wrong data repeats"},
    {"collective.wrong_data_everywhere", kInconclusive, kUnknown,
     "{collective}: every node of the {nodes}-node run {run} returned wrong data; the fault spread "
     "through the reduction and cannot be pinned on one node",
     "rerun per node (scope node) or in pairs to find the node"},
    {"collective.fail_unattributed", kInconclusive, kUnknown,
     "{collective}: run {run} reported a failure without naming a rank: {detail}",
     "rerun the sweep; if it fails again, run per node"},
    {"collective.not_arrived", kQuarantine, kTriage,
     "rank {ranks} did not arrive at {operation} within {timeout} s (run {run})",
     "drain; read this node's logs (dmesg, XIDs) for a crash or hang, then rerun"},
    {"collective.timeout_unattributed", kInconclusive, kUnknown,
     "{operation} did not complete within {timeout} s in run {run}{detail}; no node can be blamed",
     "rerun; if it repeats, localize with per-node and pairwise runs"},
    {"collective.straggler", kQuarantine, kTriage,
     "{collective}: rank {ranks} kept the others waiting in {hits} of {total} records (median "
     "lead {lead}% of the median rank time, run {run})",
     "drain; look for throttling, CPU contention or a slow link on this node, then rerun"},
    {"burn.miscompare", kQuarantine, kIsolate, "{where}burn {kernel}: {count} miscompared elements",
     "drain; rerun burn on this GPU; replace the GPU if miscompares repeat"},
    {"burn.peer_mismatch", kQuarantine, kIsolate,
     "{where}burn {kernel}: result differs from the majority of {peers} same-model GPUs",
     "drain; rerun burn on this GPU; replace the GPU if the mismatch repeats"},
    {"membw.integrity", kQuarantine, kIsolate,
     "{where}memory test: {count} errors in {tested} tested{detail}",
     "drain; reset the GPU and rerun membw; replace it if errors repeat"},
    {"stage.fail", kQuarantine, kTriage, "{where}{check} reported a failure: {detail}",
     "drain; act on the stage's reason, rerun the stage, then certify again"},
    // Performance against the baseline and the fleet.
    {"perf.below_floor", kQuarantine, kTriage,
     "{where}{metric} {measured} {unit} below the floor {limit} {unit}",
     "drain; check clocks, power cap, cooling, cabling and topology; rerun the stage"},
    {"perf.above_ceiling", kQuarantine, kTriage,
     "{where}{metric} {measured} {unit} above the ceiling {limit} {unit}",
     "drain; check cooling and airflow for this part; rerun the stage"},
    {"perf.not_equal", kQuarantine, kTriage,
     "{where}{metric} {measured} {unit}, the baseline requires {limit} {unit}",
     "drain; check the part's configuration, cabling and firmware"},
    {"perf.regression", kQuarantine, kTriage,
     "{where}{metric} {measured} {unit} is {pct}% below the expected {expected} {unit} (allowed "
     "{limit}%)",
     "drain; compare with the baseline run: clocks, firmware, driver, topology"},
    {"perf.fleet_outlier", kQuarantine, kTriage,
     "{where}{metric} {measured} {unit} is {pct}% below the fleet median {median} {unit} (robust z "
     "{z}, {nodes} nodes)",
     "drain; compare with its peers: clocks, power cap, thermals, firmware"},
    {"perf.unattributed", kInconclusive, kUnknown,
     "{metric} {measured} {unit} fails {rule} ({limit} {unit}) in the {peers}-node run {run}; no "
     "single node can be blamed",
     "localize with per-node or pairwise runs"},
    // Localization: pairwise rounds after a cluster-wide shortfall (docs/localization.md).
    {"localization.bad_node", kQuarantine, kTriage,
     "{collective} in pairwise rounds: slow with {failed} of {partners} partners ({figures}, "
     "run {run}){detail}",
     "drain; check this node's HCA, cable and switch port (ibstat, port counters) and its "
     "GPU-NIC placement, then rerun"},
    {"localization.bisect_bad_node", kQuarantine, kTriage,
     "{collective} in bisection over {nodes} nodes ({rounds} rounds, run {run}): slow in every "
     "group it was in, and again with known-good {partners} ({figures}; groups need {limit} "
     "GB/s)",
     "drain; check this node's HCA, cable and switch port (ibstat, port counters) and its "
     "GPU-NIC placement, then rerun"},
    {"localization.suspect_link", kWarn, kMonitor,
     "link {link}: {figures} (run {run}); both nodes pass with their other partners{detail}",
     "check the cables, transceivers and switch ports on the path between these two nodes"},
    // {path}, {pattern}, {target}: the switch a topology names, else the groups by their nodes.
    {"localization.suspect_switch", kWarn, kMonitor,
     "switch path {path}: {pattern} ({figures}, run {run}){detail}; no node is blamed",
     "check {target} (port counters, optics, `ibdiagnet`); draining the nodes would not help"},
    {"localization.unresolved", kInconclusive, kUnknown,
     "{collective} in pairwise rounds: slow with {failed} of {partners} partners ({figures}, "
     "run {run}){detail}",
     "re-test it: `commcert run` does so itself; by hand, sweep --scope pairs --pair-list "
     "NODE:GOOD_NODE with the same run id, then certify again"},
    {"perf.warn_band", kWarn, kMonitor,
     "{where}{metric} {measured} {unit} within {band}% of the {bound} {limit} {unit}",
     "watch this node; certify again after maintenance"},
    // Hardware state (DCGM-grade defaults; limits in the baseline's health checks).
    {"health.ecc_uncorrectable", kQuarantine, kReset,
     "{where}{count} uncorrectable ECC errors since the last reset (limit {limit})",
     "drain; reset the GPU so the rows are remapped, then certify again; replace it if it recurs"},
    {"health.ecc_correctable", kWarn, kMonitor,
     "{where}{count} correctable ECC errors since the last reset (warn above {limit})",
     "watch the count; plan a replacement if it keeps rising"},
    {"health.remap_failure", kQuarantine, kIsolate, "{where}row remapping failed",
     "drain and replace the GPU (row-remap failure, XID 64)"},
    {"health.remap_pending", kQuarantine, kReset, "{where}a row remap is pending",
     "drain; reset the GPU to apply the remap, then certify again"},
    {"health.remap_many", kWarn, kMonitor,
     "{where}{count} rows remapped for uncorrectable errors (warn at {limit})",
     "plan a replacement of this GPU"},
    {"health.retired_pages", kQuarantine, kIsolate,
     "{where}{count} retired pages{detail} (limit {limit})",
     "drain; reset the GPU; replace it when pages keep retiring"},
    {"health.retired_pending", kQuarantine, kReset, "{where}a page retirement is pending",
     "drain; reset the GPU to retire the page, then certify again"},
    {"health.pcie_degraded", kQuarantine, kTriage,
     "{where}PCIe link gen{gen} x{width}, expected {expected}",
     "drain; reseat the GPU, check riser and slot, then certify again"},
    {"health.pcie_replays", kWarn, kMonitor, "{where}{count} PCIe replays (warn above {limit})",
     "watch the count; reseat the GPU at the next maintenance"},
    {"health.nvlink_down", kQuarantine, kReset, "{where}{detail}",
     "drain; reset the GPU and check Fabric Manager; service the baseboard if a link stays down"},
    {"health.nvlink_errors", kQuarantine, kReset,
     "{where}NVLink {link}: {replay} replay and {recovery} recovery errors (limits {limit})",
     "drain; reset the GPU; service the baseboard if errors recur"},
    {"health.nvlink_crc", kWarn, kMonitor,
     "{where}NVLink {link}: {count} CRC errors (warn above {limit})",
     "watch the link; service it if the count keeps rising"},
    {"health.xid_fatal", kQuarantine, kReset, "{where}XID {xid} reported{detail}",
     "drain; reset the GPU and read NVIDIA's XID catalog for XID {xid}; replace it if it recurs"},
    {"health.xid", kWarn, kMonitor, "{where}XID {xid} reported{detail}",
     "look up XID {xid}; watch the node"},
    {"health.throttle", kWarn, kMonitor, "{where}clock events other than power capping: {reasons}",
     "check cooling and power delivery"},
    {"health.gpu_lost", kQuarantine, kReset, "{where}the GPU is lost (fell off the bus){detail}",
     "drain; reset the node and read dmesg (XID 79); reseat or replace the GPU if it recurs"},
    {"health.gpu_count", kQuarantine, kIsolate,
     "{found} GPUs visible, the baseline expects {limit}",
     "drain; find the missing GPU (nvidia-smi -L, dmesg), reseat or replace it"},
    {"health.ib_port_count", kQuarantine, kTriage,
     "{found} InfiniBand ports found, the baseline expects {limit}",
     "drain; check the HCAs are seen by the OS (ibstat) and their drivers load"},
    {"health.ib_port_down", kQuarantine, kTriage, "{where}port state {state}, physical {phys}",
     "drain; check the cable, transceiver and switch port"},
    {"health.ib_counter", kQuarantine, kTriage, "{where}{counter} {count} (limit {limit})",
     "drain; the link is flapping: check or replace the cable and transceiver"},
    {"health.ib_errors", kWarn, kMonitor, "{where}{counter} {count} (warn above {limit})",
     "watch the port; replace the cable if errors keep rising"},
    // Link tests between nodes (docs/links.md).
    {"links.slow_node", kQuarantine, kTriage,
     "{test} {size}{rail}: slow with all {partners} partners (median {measured} {unit}, pairs "
     "need {limit} {unit}, run {run})",
     "drain; check this node's NIC, its cable and switch port (ibstat, port counters) and the "
     "NIC's PCIe path to its GPU, then rerun links"},
    {"links.slow_link", kWarn, kMonitor,
     "link {link}{rail}: {test} {measured} {unit} at {size}, pairs need {limit} {unit} (run "
     "{run}); both nodes pass with their other partners",
     "check the cable, transceivers and switch ports on the path between these two nodes"},
    {"links.unresolved", kInconclusive, kUnknown,
     "{test} {size}{rail}: slow with {failed} of {partners} partners (median {measured} {unit}, "
     "pairs need {limit} {unit}, run {run}); no passing partner clears the node",
     "rerun links with more nodes (or with a known-good node) to tell the node from the link"},
    {"links.counter_errors", kQuarantine, kTriage,
     "{where}{counter} grew by {count} during a link test with {partner} (limit {limit})",
     "drain; the port accrues errors under load: check or replace the cable and transceiver"},
    {"links.counter_saturated", kInconclusive, kUnknown,
     "{where}{counter} is at its maximum, so errors during the link test with {partner} cannot "
     "show (limit {limit})",
     "clear the port's counters (perfquery -x -R, or reset them on the switch) and rerun links"},
    // Copies inside a node (docs/p2p.md).
    {"p2p.slow_gpu", kQuarantine, kTriage,
     "{where}{test}: slow to all {peers} peers (median {measured} {unit}, pairs need {limit} "
     "{unit}, run {run})",
     "drain; the GPU or its NVLink/NVSwitch ports: check nvidia-smi nvlink -s and the Fabric "
     "Manager log, reset the GPU, then rerun p2p"},
    {"p2p.slow_pair", kQuarantine, kTriage,
     "{pair} {test}: {measured} {unit}, pairs need {limit} {unit} (run {run})",
     "drain; the link between these two GPUs: check nvidia-smi nvlink -s on both, then service "
     "the baseboard if it stays slow"},
    {"p2p.asymmetric", kQuarantine, kTriage,
     "{pair} {test}: {measured} GB/s, the other way {other} GB/s (more than {limit}% apart, run "
     "{run})",
     "drain; one direction of this GPU pair is degraded: check its NVLinks' error counters, "
     "then rerun p2p"},
    {"p2p.no_peer_access", kQuarantine, kTriage,
     "{pair}: the GPUs cannot map each other's memory (cudaDeviceCanAccessPeer), the baseline "
     "expects {nvlinks} NVLinks per GPU",
     "drain; check the NVLinks and Fabric Manager (nvidia-smi topo -m, nvidia-smi nvlink -s)"},
    {"p2p.host_slow", kQuarantine, kTriage,
     "{where}{direction} {measured} GB/s from {numa}, below {basis} ({limit} GB/s)",
     "drain; check the GPU's PCIe link (width, generation, riser, switch) and the host's "
     "memory configuration, then rerun p2p"},
    {"p2p.host_remote_slow", kQuarantine, kTriage,
     "{where}{test}: {measured} {unit}, limit {limit} {unit} from {basis}",
     "drain; check this GPU's PCIe path and the CPUs' link (UPI/xGMI width, NUMA and BIOS "
     "settings), then rerun p2p"},
    {"p2p.device_local_slow", kQuarantine, kTriage,
     "{where}{test}: {measured} {unit}, limit {limit} {unit} from {basis}",
     "drain; the GPU's copy engines or memory: check its clocks and ECC (nvidia-smi -q), reset "
     "the GPU, then rerun p2p and membw"},
    {"p2p.host_unjudged", kInconclusive, kUnknown,
     "{where}{direction} {measured} GB/s from {numa} not judged: no health record gives the "
     "GPU's PCIe link and the baseline sets no host floor",
     "run health in the same suite (it reads the PCIe link), or set "
     "checks.p2p.host_floor_gb_per_s"},
};

}  // namespace reason_rows

inline constexpr std::span<const ReasonSpec> kReasonCatalog = reason_rows::kRows;

}  // namespace commcert
