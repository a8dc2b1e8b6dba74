#include "cli/gpu_stage_records.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "bench/gpu_datasheet.hpp"

namespace commcert {
namespace {

// A GPU stage's records: without GPUs, one from the process saying why nothing ran; with them,
// one per GPU slot, from the slot's rank and naming its GPU.
template <typename Record>
Record unavailable_record(const GpuSlots& plan, const SlotOrigin& origin) {
  Record record;
  record.origin = origin(0);
  record.status = plan.unavailable_status;
  record.reason = plan.unavailable_reason;
  return record;
}

template <typename Record>
Record slot_record(const SlotOrigin& origin, std::size_t slot, const GpuIdentity& gpu) {
  Record record;
  record.origin = origin(slot);
  record.origin.gpu = gpu;
  return record;
}

}  // namespace

Json burn_fingerprint_entries(const std::string& node, std::size_t slot_count,
                              const std::vector<BurnOutcome>& outcomes) {
  Json mine = Json::array();
  for (std::size_t slot = 0; slot < slot_count; ++slot) {
    const BurnOutcome* outcome = slot < outcomes.size() ? &outcomes[slot] : nullptr;
    const bool usable = outcome && outcome->measured && outcome->status == RecordStatus::kOk;
    mine.push_back({{"node", node},
                    {"model", outcome ? outcome->model : ""},
                    {"fingerprint", usable && outcome->fingerprint ? Json(*outcome->fingerprint)
                                                                   : Json(nullptr)}});
  }
  return mine;
}

std::vector<PeerResult> burn_peer_results(const std::vector<std::string>& texts) {
  std::vector<PeerResult> everyone;
  for (const auto& text : texts) {
    for (const auto& entry : Json::parse(text)) {
      PeerResult result;
      result.node = entry.at("node").get<std::string>();
      result.model = entry.at("model").get<std::string>();
      if (!entry.at("fingerprint").is_null())
        result.fingerprint = entry.at("fingerprint").get<std::uint64_t>();
      everyone.push_back(std::move(result));
    }
  }
  return everyone;
}

std::vector<Json> burn_records(const BurnSettings& settings, const GpuSlots& plan,
                               const std::vector<BurnOutcome>& outcomes,
                               const std::vector<PeerVerdict>& verdicts, int first_rank,
                               const std::string& node, const SlotOrigin& origin) {
  const std::string kernel(burn_kernel_name(settings.kernel));
  std::vector<Json> records;
  if (plan.gpus.empty()) {
    auto record = unavailable_record<BurnRecord>(plan, origin);
    record.kernel = kernel;
    records.push_back(to_json(record));
  }
  for (std::size_t slot = 0; slot < outcomes.size(); ++slot) {
    const BurnOutcome& outcome = outcomes[slot];
    const PeerVerdict& peers = verdicts.at(static_cast<std::size_t>(first_rank) + slot);
    auto record = slot_record<BurnRecord>(origin, slot, outcome.gpu);
    record.status = burn_status(outcome, peers);
    if (record.status != RecordStatus::kOk) record.reason = burn_reason(outcome, peers, node);
    record.kernel = kernel;
    // Nothing ran on a GPU that was skipped or failed in set-up: no measurement fields.
    if (outcome.measured) {
      const GpuDatasheet* sheet = find_gpu_datasheet(outcome.gpu.name);
      record.measurement = burn_measurement(
          settings, outcome, peers, sheet ? datasheet_peak_tflops(*sheet, kernel) : std::nullopt);
    }
    records.push_back(to_json(record));
  }
  return records;
}

void add_host_transfers(std::vector<MembwOutcome>& outcomes,
                        const std::vector<std::optional<HostTransfer>>& transfers,
                        const std::vector<std::string>& errors) {
  for (std::size_t i = 0; i < outcomes.size() && i < transfers.size(); ++i) {
    MembwOutcome& outcome = outcomes[i];
    if (outcome.status != RecordStatus::kOk) continue;
    if (i < errors.size() && !errors[i].empty()) {
      outcome.status = RecordStatus::kError;
      outcome.reason = errors[i];
      continue;
    }
    outcome.host_transfer = transfers[i];
  }
}

std::vector<Json> membw_records(const GpuSlots& plan, const std::vector<MembwOutcome>& outcomes,
                                const SlotOrigin& origin) {
  std::vector<Json> records;
  if (plan.gpus.empty()) {
    records.push_back(to_json(unavailable_record<MembwRecord>(plan, origin)));
  }
  for (std::size_t slot = 0; slot < outcomes.size(); ++slot) {
    const MembwOutcome& outcome = outcomes[slot];
    auto record = slot_record<MembwRecord>(origin, slot, outcome.gpu);
    record.status = membw_status(outcome);
    if (record.status != RecordStatus::kOk) record.reason = membw_reason(outcome);
    const GpuDatasheet* sheet = find_gpu_datasheet(outcome.gpu.name);
    record.measurement = membw_measurement(
        outcome, sheet ? std::optional<double>(sheet->hbm_bytes_per_s) : std::nullopt);
    records.push_back(to_json(record));
  }
  return records;
}

std::vector<Json> p2p_records(const P2pSettings& s, const std::vector<P2pTest>& tests,
                              const P2pRun& run, const std::vector<GpuIdentity>& gpus,
                              const SlotOrigin& origin) {
  std::vector<Json> records;
  for (std::size_t t = 0; t < tests.size(); ++t) {
    const P2pTest& test = tests[t];
    const P2pTestResult& result = run.results[t];
    const std::size_t streams = std::max<std::size_t>(test.streams.size(), 1);
    for (std::size_t i = 0; i < streams; ++i) {
      P2pStreamResult stream;
      stream.status = result.status;
      stream.reason = result.reason;
      if (result.status == RecordStatus::kOk && i < result.samples_s.size() && test.method) {
        const bool chase = *test.method == P2pMethod::kPointerChase;
        stream.measurement = p2p_measurement(*test.method, chase ? s.chase_bytes : s.bytes,
                                             chase ? s.chase_loads : s.copies_per_sample, s.warmup,
                                             result.samples_s[i]);
      }
      const int device = i < test.streams.size() ? test.streams[i].device : 0;
      records.push_back(to_json(
          p2p_record(origin(static_cast<std::size_t>(device)), test, i, gpus, std::move(stream))));
    }
  }
  return records;
}

}  // namespace commcert
