#include "records/membw.hpp"

#include "records/json_values.hpp"

namespace commcert {
namespace {

Json bandwidth_json(const std::optional<MembwBandwidth>& b) {
  if (!b) return nullptr;
  return {{MembwBandwidth::kRead, or_null(b->read_bytes_per_s)},
          {MembwBandwidth::kWrite, or_null(b->write_bytes_per_s)},
          {MembwBandwidth::kCopy, or_null(b->copy_bytes_per_s)},
          {MembwBandwidth::kMemcpyD2d, or_null(b->memcpy_d2d_bytes_per_s)},
          {MembwBandwidth::kDatasheetPeak, or_null(b->datasheet_peak_bytes_per_s)}};
}

Json host_transfer_json(const std::optional<MembwHostTransfer>& h) {
  if (!h) return nullptr;
  return {{MembwHostTransfer::kH2d, or_null(h->h2d_bytes_per_s)},
          {MembwHostTransfer::kD2h, or_null(h->d2h_bytes_per_s)},
          {MembwHostTransfer::kNumaNode, or_null(h->numa_node)},
          {MembwHostTransfer::kPinned, h->pinned}};
}

Json integrity_json(const std::optional<MembwIntegrity>& integrity) {
  if (!integrity) return nullptr;
  Json first = Json::array();
  for (const auto& e : integrity->first_errors) {
    first.push_back({{MembwFirstError::kOffset, e.offset},
                     {MembwFirstError::kExpected, e.expected},
                     {MembwFirstError::kActual, e.actual},
                     {MembwFirstError::kPattern, e.pattern}});
  }
  return {{MembwIntegrity::kBytesTested, integrity->bytes_tested},
          {MembwIntegrity::kPatterns, integrity->patterns},
          {MembwIntegrity::kErrors, integrity->errors},
          {MembwIntegrity::kFirstErrors, std::move(first)}};
}

}  // namespace

Json to_json(const MembwRecord& record) {
  using F = MembwMeasurement;
  Json out = make_record(record, MembwRecord::kKind);
  if (!record.measurement) return out;
  const MembwMeasurement& m = *record.measurement;
  out[F::kBandwidth] = bandwidth_json(m.bandwidth);
  out[F::kFractionOfPeak] = or_null(m.fraction_of_peak);
  out[F::kFractionOfMemcpy] = or_null(m.fraction_of_memcpy);
  out[F::kHostTransfer] = host_transfer_json(m.host_transfer);
  out[F::kIntegrity] = integrity_json(m.integrity);
  out[F::kBufferBytes] = m.buffer_bytes;
  return out;
}

}  // namespace commcert
