// libFuzzer target: any bytes as the answer of `scontrol -o show node` and as its stderr
// (scripts/fuzz). The pool drains and resumes what this reader says; it must return or throw the
// RuntimeFailure it documents (a NodeName that is no valid node name), never crash, hang or read
// out of bounds, and every node it returns must carry a valid name.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/errors.hpp"
#include "core/node_identity.hpp"
#include "pool/scontrol_answers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    for (const auto& [name, status] : commcert::parse_scontrol_nodes(text)) {
      commcert::validate_node_name(name, "fuzz");  // throws UsageError, which libFuzzer reports
      (void)status.drained_by_commcert();
    }
  } catch (const commcert::RuntimeFailure&) {
  }
  (void)commcert::scontrol_failure_line(text);
  return 0;
}
