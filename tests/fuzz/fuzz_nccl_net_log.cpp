// libFuzzer target: any bytes as NCCL's NCCL_DEBUG=INFO output, read for the network NCCL chose
// (scripts/fuzz). The reader ignores what it does not know; it must never crash, hang or read
// out of bounds.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "links/nccl_net_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)commcert::nccl_net_problem(commcert::parse_nccl_net_log(text));
  return 0;
}
