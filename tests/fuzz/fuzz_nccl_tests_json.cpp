// libFuzzer target: any bytes as nccl-tests -J JSON, read and turned into records
// (scripts/fuzz).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ingest/nccl_tests_json.hpp"
#include "ingest/nccl_tests_records.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const commcert::NcclTestsLog log = commcert::parse_nccl_tests_json(text);
  commcert::IngestOptions options{"fuzz", "all_reduce_perf.json", std::nullopt};
  (void)commcert::nccl_tests_records(log, options, true);
  return 0;
}
