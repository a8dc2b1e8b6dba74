#include "records/burn.hpp"

#include "records/json_values.hpp"

namespace commcert {

Json to_json(const BurnRecord& record) {
  using F = BurnMeasurement;
  Json out = make_record(record, BurnRecord::kKind);
  out[BurnRecord::kKernel] = record.kernel;
  if (!record.measurement) return out;
  const BurnMeasurement& m = *record.measurement;
  if (m.matrix) {
    out[F::kMatrix] = {{BurnMatrix::kM, m.matrix->m},
                       {BurnMatrix::kN, m.matrix->n},
                       {BurnMatrix::kK, m.matrix->k},
                       {BurnMatrix::kDtype, m.matrix->dtype}};
  } else {
    out[F::kMatrix] = nullptr;
  }
  out[F::kRequestedDurationS] = m.requested_duration_s;
  out[F::kDurationS] = m.duration_s;
  out[F::kIterations] = m.iterations;
  out[F::kTflops] = or_null(m.tflops);
  out[F::kTflopsWindows] = m.tflops_windows;
  out[F::kMiscompares] = m.miscompares;
  out[F::kPeerMismatch] = or_null(m.peer_mismatch);
  out[F::kPeerGpus] = m.peer_gpus;
  out[F::kTelemetry] = m.telemetry;
  out[F::kCheckedResults] = m.checked_results;
  out[F::kWindowS] = m.window_s;
  out[F::kDatasheetPeakTflops] = or_null(m.datasheet_peak_tflops);
  out[F::kTimeline] = m.timeline;
  return out;
}

}  // namespace commcert
