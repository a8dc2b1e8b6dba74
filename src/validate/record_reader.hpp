#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <string_view>

#include "validate/evidence.hpp"

namespace commcert {

// Reads records.jsonl files into Evidence: a background thread splits lines and finds repeats
// (detail/line_source.hpp) while worker threads parse chunks of lines, in bounded memory
// whatever the file size.
// Nothing is dropped silently: a line that is not a record becomes an InputIssue
// (input.unparsable, or input.truncated for an unterminated last line), an exact repeat of an
// earlier line (a file copied twice) is counted and noted, a record of a kind this validator
// does not judge is noted.
class RecordReader {
 public:
  struct Options {
    // Threads parsing chunks of a file at once; 1: this thread parses. Their evidence is
    // appended in file order, so the result is the same whatever the number.
    std::size_t parse_threads = 1;
    std::size_t chunk_bytes = std::size_t{16} << 20;
  };
  // Parses on default_parse_threads(the machine's cores) threads, or as many as the environment
  // variable COMMCERT_PARSE_THREADS says (1 to 64; anything else throws UsageError naming it).
  explicit RecordReader(Evidence& evidence);
  RecordReader(Evidence& evidence, Options options);
  ~RecordReader();
  RecordReader(const RecordReader&) = delete;
  RecordReader& operator=(const RecordReader&) = delete;

  // One thread per core, at least one (0: the count is unknown) and at most four: each parsing
  // thread holds a chunk of up to 16 MiB and that chunk's evidence in memory.
  [[nodiscard]] static std::size_t default_parse_threads(unsigned cores);

  // Throws UsageError when the file cannot be opened or read.
  void read_file(const std::filesystem::path& path);

  // Shown every line the reader keeps as a record of a kind it judges (not a repeat, not a lost
  // line), in file order, with its kind: for readers that want fields the evidence drops (the
  // report's telemetry, the history's figures) without reading the file a second time. The
  // text is valid only during the call.
  using RecordObserver =
      std::function<void(EvidenceRef ref, std::string_view kind, std::string_view line)>;
  void observe(RecordObserver observer);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace commcert
