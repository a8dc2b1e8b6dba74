#include <fmt/format.h>

#include "records/burn.hpp"
#include "validate/detail/record_common.hpp"

namespace commcert::detail {
namespace {

using M = BurnMeasurement;
using Tel = BurnTelemetryFields;

void read_telemetry(ParseState& state, od::value& value, BurnEvidence& record) {
  if (is_null(value, M::kTelemetry)) return;
  for_each_field(object_of(value), M::kTelemetry, [&](std::string_view k, od::value& v) {
    if (k == Tel::kThrottle) {
      const Where throttle{M::kTelemetry, Tel::kThrottle};
      if (is_null(v, throttle)) return;
      for_each_element(array(v, throttle), k, [&](od::value& element) {
        ThrottleEvidence t;
        for_each_field(object_of(element), k, [&](std::string_view tk, od::value& tv) {
          if (tk == Tel::kThrottleReason) {
            t.reason = state.evidence.strings.intern(
                string(tv, {Tel::kThrottle, Tel::kThrottleReason, true}));
          } else if (tk == Tel::kThrottleSeconds) {
            const Where seconds{Tel::kThrottle, Tel::kThrottleSeconds, true};
            t.seconds = optional_number(tv, seconds).value_or(0);
            // A time cannot be negative: read as one it would hide the event.
            if (t.seconds < 0) record_error(seconds, fmt::format("negative ({})", t.seconds));
          }
        });
        record.throttle.push_back(t);
      });
    } else if (k == Tel::kXidEvents) {
      record.xids = read_xids(v, {M::kTelemetry, Tel::kXidEvents}, state.evidence.strings);
    }
  });
}

}  // namespace

void parse_burn(ParseState& state, od::object& object, EvidenceRef ref) {
  BurnEvidence record;
  const CommonFields c = state.read(object, [&](std::string_view key, od::value& value) {
    if (key == BurnRecord::kKernel) {
      record.kernel = state.evidence.strings.intern(string(value, key));
    } else if (key == M::kTflops) {
      record.tflops = optional_number(value, key);
    } else if (key == M::kMiscompares) {
      record.miscompares = optional_count(value, key).value_or(0);
    } else if (key == M::kPeerMismatch) {
      record.peer_mismatch = optional_boolean(value, key);
    } else if (key == M::kPeerGpus) {
      record.peer_gpus = optional_small_int(value, key).value_or(0);
    } else if (key == M::kTelemetry) {
      read_telemetry(state, value, record);
    }
  });
  state.fill_gpu_record(record, c, ref);
  if (is_fault(record.status)) {
    // A failed burn is rule.burn_correctness's (miscompares, a peer mismatch, stage.fail).
    state.add_fault(c, ref, BurnRecord::kKind, "burn").judged_by =
        record.status == RecordStatus::kFail ? FaultRecord::KindRule::kHost
                                             : FaultRecord::KindRule::kNone;
  }
  state.evidence.burns.push_back(std::move(record));
}

}  // namespace commcert::detail
