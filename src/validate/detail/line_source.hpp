#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "validate/detail/line_set.hpp"
#include "validate/evidence.hpp"

namespace commcert::detail {

// One non-blank line of a records file, trimmed.
struct SourceLine {
  const char* data = nullptr;
  std::size_t length = 0;
  std::size_t capacity = 0;  // readable bytes from `data` on (>= length + parser padding)
  std::uint32_t number = 0;  // 1-based
  bool terminated = true;    // false: the file ended without a newline after it
  std::optional<EvidenceRef> duplicate_of;  // an identical line was read before, there
  bool first_repeat_in_file = false;        // the file's first line with duplicate_of
};

// Reads a records file on a background thread: read(2), line splitting and duplicate
// detection overlap with parsing. Memory stays bounded: a few chunks of 16 MiB (more only for a
// line longer than a chunk).
class LineSource {
 public:
  struct Options {
    std::size_t chunk_bytes = std::size_t{16} << 20;
    // One being filled, one queued and one per thread parsing them.
    std::size_t chunks = 3;
  };
  // Throws UsageError when the file cannot be opened. `seen` is used by the background
  // thread until this object is destroyed.
  LineSource(const std::filesystem::path& path, std::uint32_t file, LineSet& seen, Options options);
  LineSource(const std::filesystem::path& path, std::uint32_t file, LineSet& seen)
      : LineSource(path, file, seen, Options{}) {}
  ~LineSource();
  LineSource(const LineSource&) = delete;
  LineSource& operator=(const LineSource&) = delete;

  struct Batch {
    std::span<const SourceLine> lines;  // valid until the next call of next()
    std::size_t lines_read = 0;         // blank lines included
  };
  // The next batch of lines; false after the last. Throws UsageError on a read error.
  bool next(Batch& batch);

  // The same for several consumers at once: take() chunks in file order, give each back with
  // recycle() once done with its lines (the background thread refills it).
  struct Chunk {
    std::vector<char> data;
    std::vector<SourceLine> lines;
    std::size_t lines_read = 0;  // blank lines included
    bool end = false;            // the file's last chunk
    std::string error;           // why reading stopped here (then `end`)
  };
  // The next chunk; nullptr once stop() was called. Not after the chunk with `end`.
  std::unique_ptr<Chunk> take();
  void recycle(std::unique_ptr<Chunk> chunk);
  // Wakes every take() with nullptr and stops the background thread.
  void stop();

 private:
  void produce();
  void produce_chunks();
  // Reads into data[filled, limit) until it is full or the file ends (`eof`), counting `total`;
  // the error when the read fails or the file grows past what a records file may be.
  std::optional<std::string> read_into(char* data, std::size_t limit, std::size_t& filled,
                                       std::uint64_t& total, bool& eof);
  // Marks each line that repeats an earlier one (SourceLine::duplicate_of), in file order.
  void find_repeats(std::vector<SourceLine>& lines);
  std::unique_ptr<Chunk> take_free();
  void push_ready(std::unique_ptr<Chunk> chunk);
  std::unique_ptr<Chunk> pop(std::deque<std::unique_ptr<Chunk>>& queue);
  void push(std::deque<std::unique_ptr<Chunk>>& queue, std::unique_ptr<Chunk> chunk);

  std::filesystem::path path_;
  std::uint32_t file_;
  std::size_t chunk_bytes_;
  bool repeated_ = false;  // a line of this file repeated an earlier one
  LineSet& seen_;
  std::vector<LineFingerprint> fingerprints_;  // of a chunk's lines, used by the background thread
  int fd_ = -1;
  std::mutex mutex_;
  std::condition_variable changed_;
  using ChunkQueue = std::deque<std::unique_ptr<Chunk>>;
  ChunkQueue ready_;
  ChunkQueue free_;
  std::unique_ptr<Chunk> current_;  // the batch the consumer holds
  bool stop_ = false;
  bool finished_ = false;  // the consumer has taken the last chunk
  std::thread thread_;
};

}  // namespace commcert::detail
