#include "validate/detail/line_source.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "core/bounded_input.hpp"
#include "core/errors.hpp"
#include "core/units.hpp"
#include "validate/detail/record_parser.hpp"

namespace commcert::detail {
namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.back() == '\r' || text.back() == ' ' || text.back() == '\t')) {
    text.remove_suffix(1);
  }
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t'))
    text.remove_prefix(1);
  return text;
}

std::string too_large(const std::filesystem::path& path) {
  return fmt::format(
      "records file {} is larger than {}, the most one records file may hold "
      "(split it by run directory)",
      path.string(), format_bytes(kMaxRecordsFileBytes));
}

}  // namespace

LineSource::LineSource(const std::filesystem::path& path, std::uint32_t file, LineSet& seen,
                       Options options)
    : path_(path), file_(file), chunk_bytes_(options.chunk_bytes), seen_(seen) {
  fd_ = open_input(path, "records file");
  struct stat info {};
  if (::fstat(fd_, &info) == 0 && S_ISREG(info.st_mode) &&
      static_cast<std::uint64_t>(info.st_size) > kMaxRecordsFileBytes) {
    ::close(fd_);
    throw UsageError(too_large(path));
  }
  for (std::size_t i = 0; i < std::max<std::size_t>(options.chunks, 2); ++i)
    free_.push_back(std::make_unique<Chunk>());
  thread_ = std::thread([this] { produce(); });
}

LineSource::~LineSource() {
  stop();
  thread_.join();
  ::close(fd_);
}

void LineSource::stop() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
}

// Both queues (chunks free to fill, chunks ready to parse) hand chunks over the same way.
std::unique_ptr<LineSource::Chunk> LineSource::pop(ChunkQueue& queue) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this, &queue] { return stop_ || !queue.empty(); });
  if (stop_) return nullptr;
  auto chunk = std::move(queue.front());
  queue.pop_front();
  return chunk;
}

void LineSource::push(ChunkQueue& queue, std::unique_ptr<Chunk> chunk) {
  {
    std::lock_guard lock(mutex_);
    queue.push_back(std::move(chunk));
  }
  changed_.notify_all();
}

std::unique_ptr<LineSource::Chunk> LineSource::take_free() {
  return pop(free_);
}

void LineSource::push_ready(std::unique_ptr<Chunk> chunk) {
  push(ready_, std::move(chunk));
}

void LineSource::produce() {
  try {
    produce_chunks();
  } catch (const std::exception& error) {  // out of memory: report it, do not terminate
    auto chunk = std::make_unique<Chunk>();
    chunk->error = fmt::format("cannot read {}: {}", path_.string(), error.what());
    chunk->end = true;
    push_ready(std::move(chunk));
  }
}

std::optional<std::string> LineSource::read_into(char* data, std::size_t limit, std::size_t& filled,
                                                 std::uint64_t& total, bool& eof) {
  while (filled < limit) {
    const ssize_t got = ::read(fd_, data + filled, limit - filled);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return fmt::format("cannot read {}: {}", path_.string(), std::strerror(errno));
    if (got == 0) {
      eof = true;
      break;
    }
    filled += static_cast<std::size_t>(got);
    // Counted as read, not only by size: a device or pipe (/dev/zero, /dev/urandom) has none.
    total += static_cast<std::uint64_t>(got);
    if (total > kMaxRecordsFileBytes) return too_large(path_);
  }
  return std::nullopt;
}

void LineSource::produce_chunks() {
  const std::size_t padding = parser_padding();
  std::string carry;  // a partial line from the previous chunk
  std::uint32_t number = 0;
  std::uint64_t total = 0;
  bool eof = false;
  while (!eof) {
    auto chunk = take_free();
    if (!chunk) return;
    chunk->lines.clear();
    chunk->lines_read = 0;
    // A line longer than a chunk: make room for it and as much again.
    const std::size_t room = std::max(chunk_bytes_, 2 * carry.size());
    if (chunk->data.size() < room + padding) chunk->data.resize(room + padding);
    char* data = chunk->data.data();
    // NOLINTNEXTLINE(bugprone-not-null-terminated-result): bytes, not a C string.
    std::memcpy(data, carry.data(), carry.size());
    std::size_t filled = carry.size();
    const std::size_t limit = chunk->data.size() - padding;
    if (auto error = read_into(data, limit, filled, total, eof)) {
      chunk->error = std::move(*error);
      chunk->end = true;
      push_ready(std::move(chunk));
      return;
    }
    std::size_t longest = 0;
    std::uint32_t long_line_number = 0;
    const auto add = [&](std::size_t begin, std::size_t end, bool terminated) {
      ++number;
      ++chunk->lines_read;
      if (end - begin > longest) longest = end - begin;
      if (end - begin > kMaxRecordLineBytes && long_line_number == 0) long_line_number = number;
      const std::string_view text = trim(std::string_view(data + begin, end - begin));
      if (text.empty()) return;
      SourceLine line;
      line.data = text.data();
      line.length = text.size();
      line.capacity = chunk->data.size() - static_cast<std::size_t>(text.data() - data);
      line.number = number;
      line.terminated = terminated;
      chunk->lines.push_back(line);
    };
    std::size_t start = 0;
    while (start < filled) {
      const void* newline = std::memchr(data + start, '\n', filled - start);
      if (newline == nullptr) break;
      const auto end = static_cast<std::size_t>(static_cast<const char*>(newline) - data);
      add(start, end, true);
      start = end + 1;
    }
    if (eof && start < filled) {
      add(start, filled, false);
      start = filled;
    }
    find_repeats(chunk->lines);
    carry.assign(data + start, filled - start);
    // A line longer than any record can be (a file of NULs, /dev/zero) would otherwise make the
    // chunks grow with it until memory runs out.
    if (carry.size() > kMaxRecordLineBytes || longest > kMaxRecordLineBytes) {
      chunk->error = fmt::format(
          "{}:{}: a line longer than {}, the most one record may take (this is not a records file)",
          path_.string(), long_line_number != 0 ? long_line_number : number + 1,
          format_bytes(kMaxRecordLineBytes));
      chunk->end = true;
      push_ready(std::move(chunk));
      return;
    }
    chunk->end = eof;
    push_ready(std::move(chunk));
  }
}

void LineSource::find_repeats(std::vector<SourceLine>& lines) {
  // Fingerprint every line first, then look each up with the slot of a line a few ahead already
  // on its way into the cache: the table outgrows the caches (384 MiB at ten million lines).
  constexpr std::size_t kAhead = 8;
  fingerprints_.resize(lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i)
    fingerprints_[i] = LineSet::fingerprint(std::string_view(lines[i].data, lines[i].length));
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i + kAhead < lines.size()) seen_.prefetch(fingerprints_[i + kAhead]);
    lines[i].duplicate_of = seen_.insert_fingerprinted(fingerprints_[i], {file_, lines[i].number});
    if (lines[i].duplicate_of && !repeated_) {
      repeated_ = true;
      lines[i].first_repeat_in_file = true;
    }
  }
}

std::unique_ptr<LineSource::Chunk> LineSource::take() {
  return pop(ready_);
}

void LineSource::recycle(std::unique_ptr<Chunk> chunk) {
  push(free_, std::move(chunk));
}

bool LineSource::next(Batch& batch) {
  std::unique_lock lock(mutex_);
  if (current_) {
    free_.push_back(std::move(current_));
    changed_.notify_all();
  }
  if (finished_) return false;
  changed_.wait(lock, [this] { return !ready_.empty(); });
  current_ = std::move(ready_.front());
  ready_.pop_front();
  if (!current_->error.empty()) throw UsageError(current_->error);
  finished_ = current_->end;
  batch.lines = current_->lines;
  batch.lines_read = current_->lines_read;
  return true;
}

}  // namespace commcert::detail
