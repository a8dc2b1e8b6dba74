#include "records/membw.hpp"
#include "validate/detail/record_common.hpp"

namespace commcert::detail {
namespace {

using M = MembwMeasurement;

void read_bandwidth(od::value& value, MembwEvidence& record) {
  using B = MembwBandwidth;
  if (is_null(value, M::kBandwidth)) return;
  for_each_field(object_of(value), M::kBandwidth, [&](std::string_view k, od::value& v) {
    if (k == B::kRead) {
      record.read = optional_number(v, {M::kBandwidth, B::kRead});
    } else if (k == B::kWrite) {
      record.write = optional_number(v, {M::kBandwidth, B::kWrite});
    } else if (k == B::kCopy) {
      record.copy = optional_number(v, {M::kBandwidth, B::kCopy});
    } else if (k == B::kMemcpyD2d) {
      record.memcpy_d2d = optional_number(v, {M::kBandwidth, B::kMemcpyD2d});
    }
  });
}

void read_host_transfer(od::value& value, MembwEvidence& record) {
  using H = MembwHostTransfer;
  if (is_null(value, M::kHostTransfer)) return;
  for_each_field(object_of(value), M::kHostTransfer, [&](std::string_view k, od::value& v) {
    if (k == H::kH2d) {
      record.h2d = optional_number(v, {M::kHostTransfer, H::kH2d});
    } else if (k == H::kD2h) {
      record.d2h = optional_number(v, {M::kHostTransfer, H::kD2h});
    }
  });
}

// The first error, as the verdict's message names it: "offset 0x1000, pattern walking_ones".
void read_first_error(od::value& element, MembwEvidence& record) {
  using E = MembwFirstError;
  if (!record.first_error.empty()) return;
  std::int64_t offset = -1;
  std::string_view pattern;
  for_each_field(object_of(element), MembwIntegrity::kFirstErrors,
                 [&](std::string_view k, od::value& v) {
                   if (k == E::kOffset) {
                     offset = integer(v, {MembwIntegrity::kFirstErrors, E::kOffset, true});
                   } else if (k == E::kPattern) {
                     pattern = string(v, {MembwIntegrity::kFirstErrors, E::kPattern, true});
                   }
                 });
  record.first_error =
      fmt::format("offset {:#x}{}{}", offset, pattern.empty() ? "" : ", pattern ", pattern);
}

void read_integrity(od::value& value, MembwEvidence& record) {
  using I = MembwIntegrity;
  if (is_null(value, M::kIntegrity)) return;
  for_each_field(object_of(value), M::kIntegrity, [&](std::string_view k, od::value& v) {
    if (k == I::kErrors) {
      record.integrity_errors = optional_count(v, {M::kIntegrity, I::kErrors});
    } else if (k == I::kBytesTested) {
      record.bytes_tested = optional_count(v, {M::kIntegrity, I::kBytesTested});
    } else if (k == I::kFirstErrors) {
      for_each_element(array(v, {M::kIntegrity, I::kFirstErrors}), k,
                       [&](od::value& element) { read_first_error(element, record); });
    }
  });
}

}  // namespace

void parse_membw(ParseState& state, od::object& object, EvidenceRef ref) {
  MembwEvidence record;
  const CommonFields c = state.read(object, [&](std::string_view key, od::value& value) {
    if (key == M::kBandwidth) {
      read_bandwidth(value, record);
    } else if (key == M::kHostTransfer) {
      read_host_transfer(value, record);
    } else if (key == M::kIntegrity) {
      read_integrity(value, record);
    }
  });
  state.fill_gpu_record(record, c, ref);
  if (is_fault(record.status)) {
    // A failed memory test is rule.membw_integrity's (integrity errors, stage.fail).
    state.add_fault(c, ref, MembwRecord::kKind, "membw").judged_by =
        record.status == RecordStatus::kFail ? FaultRecord::KindRule::kHost
                                             : FaultRecord::KindRule::kNone;
  }
  state.evidence.membws.push_back(std::move(record));
}

}  // namespace commcert::detail
