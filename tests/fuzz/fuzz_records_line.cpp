// libFuzzer target: any bytes as records.jsonl, each line given to the validator's record
// parser the way RecordReader does (scripts/fuzz). A line that is not a record must end in
// SyntaxError, RecordError or UnsupportedSchema; anything else escaping is a bug.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "validate/detail/record_parser.hpp"
#include "validate/evidence.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  commcert::Evidence evidence;
  evidence.files.push_back({});
  commcert::detail::RecordParser parser(evidence);
  std::string padded;
  std::uint32_t number = 0;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    ++number;
    // A copy of exactly the line, so ASan sees any read past the padding simdjson asked for.
    padded.assign(line);
    padded.resize(line.size() + commcert::detail::parser_padding(), '\0');
    try {
      (void)parser.parse(padded.data(), line.size(), padded.size(), {0, number});
    } catch (const commcert::detail::SyntaxError&) {
    } catch (const commcert::detail::RecordError&) {
    } catch (const commcert::detail::UnsupportedSchema&) {
    }
    (void)commcert::detail::sniff_string_field(line, "host");
  }
  evidence.finish();
  return 0;
}
