#include "records/p2p.hpp"

#include "records/json_values.hpp"

namespace commcert {

Json to_json(const P2pRecord& record) {
  using R = P2pRecord;
  using M = P2pMeasurement;
  Json out = make_record(record, R::kKind);
  out[R::kPath] = or_null(record.path);
  out[R::kMethod] = or_null(record.method);
  out[R::kAccess] = or_null(record.access);
  out[R::kBidirectional] = record.bidirectional;
  out[R::kSrcGpu] = or_null(record.src_gpu);
  out[R::kDstGpu] = or_null(record.dst_gpu);
  out[R::kHostNumaNode] = or_null(record.host_numa_node);
  out[R::kHostNumaLocal] = or_null(record.host_numa_local);
  out[R::kPeerAccess] = or_null(record.peer_access);
  if (!record.measurement) return out;
  const P2pMeasurement& m = *record.measurement;
  out[M::kBytes] = m.bytes;
  out[M::kCopiesPerSample] = m.copies_per_sample;
  out[M::kIterations] = m.iterations;
  out[M::kWarmup] = m.warmup;
  out[M::kSamples] = m.samples_s;
  out[M::kBytesPerS] = or_null(m.bytes_per_s);
  out[M::kLatencyS] = or_null(m.latency_s);
  return out;
}

}  // namespace commcert
