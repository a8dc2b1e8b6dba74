#pragma once

#include <string_view>

#include "ingest/nccl_tests_log.hpp"

namespace commcert {

// nccl-tests' JSON output (`-J file.json`, JSON_FILE_VERSION 3, nccl-tests 2.17.4 and later) read
// into the same structure as its text output, so both become the same records. Its quirks are
// read as written: booleans as "true"/"false" strings, `root` as a padded string ("    -1"),
// `nwrong` a number or null, NaN as "nan". Never throws on content: a file that is not JSON, or
// a result that lacks a field, is listed in `unreadable` (line 0, the element named).
[[nodiscard]] NcclTestsLog parse_nccl_tests_json(std::string_view text);

// Whether a log's text is the JSON form (its first non-blank character opens an object).
[[nodiscard]] bool looks_like_json(std::string_view text);

}  // namespace commcert
