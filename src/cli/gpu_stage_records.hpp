#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/burn.hpp"
#include "bench/membw.hpp"
#include "bench/p2p_engine.hpp"
#include "bench/peer_compare.hpp"
#include "cli/gpu_slots.hpp"
#include "core/json.hpp"
#include "core/record.hpp"

// What the GPU stages (burn, membw, p2p) make of their engines' outcomes: the records, and the
// entries burn's GPUs exchange to compare results with their peers. Pure functions of their
// arguments: the stage commands call them with their session's origins (StageSession::origin).
namespace commcert {

// The origin of the record of this process's slot `slot` (its rank and GPU).
using SlotOrigin = std::function<RecordOrigin(std::size_t slot)>;

// This process's entries for the comparison between GPUs, one per slot (so entry i of the
// gathered list is rank i): node, model, and the first-result fingerprint of a GPU that measured
// without error (null otherwise).
[[nodiscard]] Json burn_fingerprint_entries(const std::string& node, std::size_t slot_count,
                                            const std::vector<BurnOutcome>& outcomes);
// Every process's entries (the all_gather of burn_fingerprint_entries, in process order) as
// results in rank order.
[[nodiscard]] std::vector<PeerResult> burn_peer_results(const std::vector<std::string>& texts);

// This process's burn records: one per GPU, judged with its peers (`verdicts` in rank order; this
// process's ranks start at `first_rank`), or, without GPUs, one saying why.
[[nodiscard]] std::vector<Json> burn_records(const BurnSettings& settings, const GpuSlots& plan,
                                             const std::vector<BurnOutcome>& outcomes,
                                             const std::vector<PeerVerdict>& verdicts,
                                             int first_rank, const std::string& node,
                                             const SlotOrigin& origin);

// Joins each GPU's host transfer (measured apart, one GPU of a host at a time) to its device
// outcome: a failed host transfer makes an otherwise ok GPU an error naming it.
void add_host_transfers(std::vector<MembwOutcome>& outcomes,
                        const std::vector<std::optional<HostTransfer>>& transfers,
                        const std::vector<std::string>& errors);

// This process's membw records: one per GPU, or, without GPUs, one saying why.
[[nodiscard]] std::vector<Json> membw_records(const GpuSlots& plan,
                                              const std::vector<MembwOutcome>& outcomes,
                                              const SlotOrigin& origin);

// The p2p records of `tests` as `run` measured them: one per stream of each test, from the rank
// of the GPU that drives the stream. `gpus` are the tests' GPU positions.
[[nodiscard]] std::vector<Json> p2p_records(const P2pSettings& settings,
                                            const std::vector<P2pTest>& tests, const P2pRun& run,
                                            const std::vector<GpuIdentity>& gpus,
                                            const SlotOrigin& origin);

}  // namespace commcert
