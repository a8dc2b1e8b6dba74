#include "bench/burn.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "bench/throughput.hpp"
#include "core/errors.hpp"
#include "core/stats.hpp"

namespace commcert {
namespace {

struct KernelInfo {
  BurnKernel kernel;
  std::string_view name;
  std::string_view dtype;
  int min_cc;
};

constexpr std::array<KernelInfo, 6> kKernels = {{
    {BurnKernel::kGemmBf16, "gemm_bf16", "bf16", 80},
    {BurnKernel::kGemmFp16, "gemm_fp16", "fp16", 80},
    {BurnKernel::kGemmTf32, "gemm_tf32", "tf32", 80},
    {BurnKernel::kGemmFp8, "gemm_fp8", "fp8_e4m3", 89},
    {BurnKernel::kGemmFp64, "gemm_fp64", "fp64", 80},
    {BurnKernel::kPowerFma, "power_fma", "", 80},
}};

const KernelInfo& info(BurnKernel kernel) {
  for (const auto& entry : kKernels) {
    if (entry.kernel == kernel) return entry;
  }
  return kKernels.front();
}

}  // namespace

std::string_view burn_kernel_name(BurnKernel kernel) {
  return info(kernel).name;
}
std::string_view burn_matrix_dtype(BurnKernel kernel) {
  return info(kernel).dtype;
}
int burn_min_compute_capability(BurnKernel kernel) {
  return info(kernel).min_cc;
}

BurnKernel parse_burn_kernel(std::string_view text, std::string_view flag) {
  for (const auto& entry : kKernels) {
    if (entry.name == text) return entry.kernel;
  }
  throw UsageError(fmt::format(
      "{} '{}': expected gemm_bf16, gemm_fp16, gemm_tf32, gemm_fp8, gemm_fp64 or power_fma", flag,
      text));
}

std::vector<std::uint64_t> burn_window_spans(std::uint64_t launches_per_window, int check_every) {
  const std::uint64_t launches = std::max<std::uint64_t>(launches_per_window, 1);
  if (check_every <= 0) return {launches};
  const auto span = static_cast<std::uint64_t>(check_every);
  std::vector<std::uint64_t> spans(launches / span, span);
  if (launches % span != 0) spans.push_back(launches % span);
  return spans;
}

BurnMeasurement burn_measurement(const BurnSettings& settings, const BurnOutcome& outcome,
                                 const PeerVerdict& peers,
                                 std::optional<double> datasheet_peak_tflops) {
  BurnMeasurement m;
  if (settings.kernel != BurnKernel::kPowerFma) {
    m.matrix = BurnMatrix{settings.size, settings.size, settings.size,
                          std::string(burn_matrix_dtype(settings.kernel))};
  }
  m.requested_duration_s = settings.duration_s;
  m.duration_s = outcome.duration_s;
  m.iterations = outcome.iterations;
  if (!outcome.window_tflops.empty()) m.tflops = median(outcome.window_tflops);
  m.tflops_windows = window_summary_json(outcome.window_tflops);
  m.miscompares = outcome.miscompares;
  m.peer_mismatch = peers.mismatch;
  m.peer_gpus = peers.peers;
  m.telemetry = outcome.telemetry;
  m.timeline = outcome.timeline;
  m.checked_results = outcome.checked_results;
  m.window_s = settings.window_s;
  m.datasheet_peak_tflops = datasheet_peak_tflops;
  return m;
}

RecordStatus burn_status(const BurnOutcome& outcome, const PeerVerdict& peers) {
  if (outcome.status != RecordStatus::kOk) return outcome.status;
  if (outcome.miscompares > 0 || peers.mismatch.value_or(false)) return RecordStatus::kFail;
  return RecordStatus::kOk;
}

std::string burn_reason(const BurnOutcome& outcome, const PeerVerdict& peers,
                        const std::string& node) {
  if (outcome.status != RecordStatus::kOk) return outcome.reason;
  std::vector<std::string> parts;
  if (outcome.miscompares > 0) {
    parts.push_back(fmt::format(
        "GPU {} computed {} result element(s) differently from its own first result ({} checks)",
        outcome.gpu.index, outcome.miscompares, outcome.checked_results));
  }
  if (peers.mismatch.value_or(false)) {
    parts.push_back(fmt::format(
        "GPU {} ({}) computed a different result from the majority of its {} same-model peer(s) on "
        "{}",
        outcome.gpu.index, outcome.gpu.pci_bus_id.empty() ? "?" : outcome.gpu.pci_bus_id,
        peers.peers, node));
  }
  std::string reason;
  for (const auto& part : parts)
    reason += (reason.empty() ? "" : "; ") + part;
  return reason;
}

}  // namespace commcert
