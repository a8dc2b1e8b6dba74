#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

#include "validate/evidence.hpp"

namespace commcert::detail {

// What became of one line.
enum class LineOutcome { kStored, kUnknownKind };

// Valid JSON but not a valid record (wrong type, missing field).
class RecordError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Record schema newer than this reader: fail closed rather than misread it.
class UnsupportedSchema : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Turns one JSON line into evidence. Throws RecordError (valid JSON, not a valid record),
// UnsupportedSchema, or SyntaxError (not JSON) with a one-line description.
class RecordParser {
 public:
  explicit RecordParser(Evidence& evidence);
  ~RecordParser();
  RecordParser(const RecordParser&) = delete;
  RecordParser& operator=(const RecordParser&) = delete;

  // `capacity` >= length + simdjson's padding: the bytes after the line must be readable.
  LineOutcome parse(const char* line, std::size_t length, std::size_t capacity, EvidenceRef ref);
  // The kind of the record parse() last returned kStored for.
  [[nodiscard]] const std::string& last_kind() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class SyntaxError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The value of a top-level string field found by text search, for attributing a line that
// could not be parsed ("host", "run_id", "kind"); empty when not found.
[[nodiscard]] std::string sniff_string_field(std::string_view line, std::string_view key);

// Bytes of readable padding simdjson needs after the last byte it parses.
[[nodiscard]] std::size_t parser_padding();

}  // namespace commcert::detail
