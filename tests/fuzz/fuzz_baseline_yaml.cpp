// libFuzzer target: any bytes as a baseline YAML file (scripts/fuzz). What cannot be read must
// end in one UsageError naming file, line and column; anything else escaping is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/errors.hpp"
#include "validate/baseline.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)commcert::parse_baseline(text, "fuzz.yaml");
  } catch (const commcert::UsageError&) {
  }
  return 0;
}
