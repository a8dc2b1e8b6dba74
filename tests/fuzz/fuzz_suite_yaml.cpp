// libFuzzer target: any bytes as a suite YAML file (scripts/fuzz). A suite that cannot be read
// must end in one UsageError naming file, line and column; anything else escaping, a crash, a
// hang or an out-of-bounds read is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/errors.hpp"
#include "validate/suite.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)commcert::parse_suite(text, "fuzz.yaml");
  } catch (const commcert::UsageError&) {
  }
  return 0;
}
