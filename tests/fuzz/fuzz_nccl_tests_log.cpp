// libFuzzer target: any bytes as an nccl-tests text log, read and turned into records
// (scripts/fuzz). The parser must never crash, hang or read out of bounds, whatever it is
// given; what it cannot read it lists.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ingest/nccl_tests_log.hpp"
#include "ingest/nccl_tests_records.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const commcert::NcclTestsLog log = commcert::parse_nccl_tests_log(text);
  commcert::IngestOptions options{"fuzz", "all_reduce_perf.log", std::nullopt};
  (void)commcert::nccl_tests_records(log, options, true);
  return 0;
}
