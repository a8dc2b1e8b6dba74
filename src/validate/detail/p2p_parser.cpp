#include "records/p2p.hpp"
#include "validate/detail/record_common.hpp"

namespace commcert::detail {
namespace {

using R = P2pRecord;
using M = P2pMeasurement;

bool one_of(std::string_view text, std::initializer_list<std::string_view> names) {
  for (const auto name : names) {
    if (text == name) return true;
  }
  return false;
}

// The fields of a p2p record that say what was measured, before they are checked together.
struct P2pFields {
  std::string_view path;
  std::string_view method;
  std::string_view access;
  std::optional<int> src;
  std::optional<int> dst;
  bool has_bytes = false;
};

void check_measurement(const P2pFields& f, const P2pEvidence& record) {
  const auto& [path, method, access, src, dst, has_bytes] = f;
  // A measurement the validator cannot place or judge is lost input, never a pass.
  if (path.empty()) record_error(R::kPath, "missing for a measurement");
  if (method.empty()) record_error(R::kMethod, "missing for a measurement");
  if (!has_bytes) record_error(M::kBytes, "missing for a measurement");
  if (method == "pointer_chase" && !record.latency_s) {
    record_error(M::kLatencyS, "missing for a pointer chase");
  }
  if (!method.empty() && method != "pointer_chase" && !record.bytes_per_s) {
    record_error(M::kBytesPerS, "missing for a copy");
  }
  if (path == "gpu_gpu") {
    if (!src || !dst) record_error(R::kSrcGpu, "a GPU pair names both GPUs");
    if (src && dst && *src == *dst) record_error(R::kDstGpu, "a GPU paired with itself");
    if (access.empty()) record_error(R::kAccess, "missing for a GPU pair");
  } else if (path == "host_gpu") {
    if (src.has_value() == dst.has_value()) {
      record_error(R::kSrcGpu, "host_gpu names exactly one GPU, src or dst");
    }
  } else if (path == "device_local") {
    if (!src || src != dst) record_error(R::kDstGpu, "device_local names one GPU as both ends");
  }
}

}  // namespace

void parse_p2p(ParseState& state, od::object& object, EvidenceRef ref) {
  Evidence& evidence = state.evidence;
  P2pEvidence record;
  P2pFields f;
  const CommonFields c = state.read(object, [&](std::string_view key, od::value& value) {
    if (key == R::kPath) {
      if (const auto text = optional_string(value, key)) f.path = *text;
      if (!f.path.empty() && !one_of(f.path, {"gpu_gpu", "host_gpu", "device_local"})) {
        record_error(key, "not gpu_gpu, host_gpu or device_local");
      }
      if (!f.path.empty()) record.path = evidence.strings.intern(f.path);
    } else if (key == R::kMethod) {
      if (const auto text = optional_string(value, key)) f.method = *text;
      if (!f.method.empty() && !one_of(f.method, {"copy_engine", "sm_copy", "pointer_chase"})) {
        record_error(key, "not copy_engine, sm_copy or pointer_chase");
      }
      if (!f.method.empty()) record.method = evidence.strings.intern(f.method);
    } else if (key == R::kAccess) {
      if (const auto text = optional_string(value, key)) f.access = *text;
      if (!f.access.empty() && !one_of(f.access, {"write", "read"})) {
        record_error(key, "not write or read");
      }
      if (!f.access.empty()) record.access = evidence.strings.intern(f.access);
    } else if (key == R::kBidirectional) {
      record.bidirectional = boolean(value, key);
    } else if (key == R::kSrcGpu) {
      f.src = optional_small_int(value, key);
    } else if (key == R::kDstGpu) {
      f.dst = optional_small_int(value, key);
    } else if (key == R::kHostNumaNode) {
      record.host_numa_node = optional_small_int(value, key);
    } else if (key == R::kHostNumaLocal) {
      record.host_numa_local = optional_boolean(value, key);
    } else if (key == R::kPeerAccess) {
      record.peer_access = optional_boolean(value, key);
    } else if (key == M::kBytes) {
      const std::int64_t bytes = integer(value, key);
      if (bytes <= 0) record_error(key, "must be positive");
      record.bytes = static_cast<std::uint64_t>(bytes);
      f.has_bytes = true;
    } else if (key == M::kBytesPerS) {
      record.bytes_per_s = optional_number(value, key);
      if (record.bytes_per_s && !(*record.bytes_per_s > 0)) record_error(key, "must be positive");
    } else if (key == M::kLatencyS) {
      record.latency_s = optional_number(value, key);
      if (record.latency_s && !(*record.latency_s > 0)) record_error(key, "must be positive");
    }
  });
  state.fill_gpu_record(record, c, ref);
  record.run = evidence.run_index(*c.run_id);
  record.src_gpu = f.src.value_or(-1);
  record.dst_gpu = f.dst.value_or(-1);
  if (record.status == RecordStatus::kOk || record.status == RecordStatus::kFail) {
    check_measurement(f, record);
  }
  if (is_fault(record.status)) state.add_fault(c, ref, P2pRecord::kKind, "p2p");
  evidence.p2p.push_back(std::move(record));
}

}  // namespace commcert::detail
