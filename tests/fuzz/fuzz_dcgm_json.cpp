// libFuzzer target: any bytes as `dcgmi diag -j` JSON, read and turned into health records
// (scripts/fuzz).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ingest/dcgm_diag.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)commcert::looks_like_dcgm_diag(text);
  const commcert::DcgmDiag diag = commcert::parse_dcgm_diag(text);
  (void)commcert::dcgm_diag_records(diag, {"fuzz", "node-1"});
  return 0;
}
