#include "validate/record_reader.hpp"

#include <algorithm>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/node_identity.hpp"
#include "core/printable.hpp"
#include "validate/detail/evidence_merge.hpp"
#include "validate/detail/line_set.hpp"
#include "validate/detail/line_source.hpp"
#include "validate/detail/record_parser.hpp"

namespace commcert {
namespace {

std::string excerpt(std::string_view line) {
  constexpr std::size_t kMax = 60;
  if (line.size() <= kMax) return std::string(line);
  return fmt::format("{}...", line.substr(0, kMax));
}

}  // namespace

namespace {

// What a chunk's lines add to their file's summary.
struct LineTally {
  std::size_t lines_read = 0;
  std::size_t records = 0;
  std::size_t duplicates = 0;
  std::size_t unreadable = 0;
  bool truncated = false;
  std::map<std::string, std::size_t> unknown_kinds;
};

// Turns lines into evidence in `target`: the whole evidence when one thread parses, else a
// part that is appended to it in file order (detail/evidence_merge.hpp).
class ChunkParser {
 public:
  ChunkParser(Evidence& target, const std::vector<std::string>& paths,
              const RecordReader::RecordObserver* observer)
      : target_(target), paths_(paths), observer_(observer), parser_(target) {}

  void parse(std::uint32_t file, const detail::LineSource::Chunk& chunk, LineTally& tally) {
    tally.lines_read += chunk.lines_read;
    for (const auto& line_in_file : chunk.lines)
      line(file, line_in_file, tally);
  }

 private:
  void line(std::uint32_t file, const detail::SourceLine& source, LineTally& tally) {
    const std::string_view text(source.data, source.length);
    const EvidenceRef ref{file, source.number};
    const bool terminated = source.terminated;
    if (source.duplicate_of) {
      ++tally.duplicates;
      if (source.first_repeat_in_file) {
        const auto& first = *source.duplicate_of;
        target_.issues.push_back(
            {"input.duplicate_records", ref,
             fmt::format(
                 "repeats {}:{} (exact copies are read once; see the file's duplicate count)",
                 paths_[first.file], first.line)});
      }
      return;
    }
    try {
      const auto outcome = parser_.parse(text.data(), text.size(), source.capacity, ref);
      if (outcome == detail::LineOutcome::kUnknownKind) {
        ++tally.unknown_kinds[detail::sniff_string_field(text, "kind")];
      } else {
        ++tally.records;
        if (observer_ != nullptr && *observer_) (*observer_)(ref, parser_.last_kind(), text);
      }
    } catch (const detail::UnsupportedSchema& error) {
      lost(ref, text, "input.unsupported_schema", error.what(), tally);
    } catch (const detail::SyntaxError& error) {
      lost(ref, text, terminated ? "input.unparsable" : "input.truncated",
           fmt::format("{}: {}", error.what(), excerpt(text)), tally);
    } catch (const detail::RecordError& error) {
      lost(ref, text, "input.unparsable", error.what(), tally);
    }
  }

  // A line whose evidence is lost: attribute it as narrowly as its text allows.
  void lost(EvidenceRef ref, std::string_view text, std::string code, std::string what,
            LineTally& tally) {
    ++tally.unreadable;
    if (code == "input.truncated") tally.truncated = true;
    InputIssue issue{std::move(code), ref, std::move(what)};
    const std::string kind = detail::sniff_string_field(text, "kind");
    const std::string host = detail::sniff_string_field(text, "host");
    const std::string run_id = detail::sniff_string_field(text, "run_id");
    // Collective records are written by rank 0 about every rank: their host is not the subject.
    // A host that is no valid node name names no node: the loss is the run's.
    const bool named = !host.empty() && !node_name_problem(host);
    if (named && (kind == "burn" || kind == "membw" || kind == "health")) {
      issue.node = target_.nodes.intern(host);
    } else if (!run_id.empty()) {
      issue.run = target_.run_index(run_id);
    }
    target_.issues.push_back(std::move(issue));
  }

  Evidence& target_;
  const std::vector<std::string>& paths_;
  const RecordReader::RecordObserver* observer_;
  detail::RecordParser parser_;
};

// A chunk parsed by a worker thread into evidence of its own, waiting to be appended in order.
struct ParsedChunk {
  std::unique_ptr<detail::LineSource::Chunk> chunk;
  std::unique_ptr<Evidence> part;
  LineTally tally;
  std::exception_ptr error;
};

constexpr std::size_t kMostParseThreads = 64;

std::size_t parse_threads_from_environment() {
  // COMMCERT_PARSE_THREADS=1 parses on the calling thread (docs/performance.md).
  const char* text = std::getenv("COMMCERT_PARSE_THREADS");
  if (text == nullptr || *text == '\0')
    return RecordReader::default_parse_threads(std::thread::hardware_concurrency());
  std::size_t threads = 0;
  const std::string_view value(text);
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), threads);
  if (error != std::errc() || end != value.data() + value.size() || threads < 1 ||
      threads > kMostParseThreads) {
    throw UsageError(
        fmt::format("COMMCERT_PARSE_THREADS: expected a number of threads from 1 to "
                    "{}, got '{}'",
                    kMostParseThreads, printable(value)));
  }
  return threads;
}

}  // namespace

struct RecordReader::Impl {
  Impl(Evidence& e, Options o) : evidence(e), options(o) {}

  Evidence& evidence;
  Options options;
  detail::LineSet seen;            // every line read so far, to count exact repeats
  std::vector<std::string> paths;  // of evidence.files, read by the parsing threads
  RecordObserver observer;

  void add(std::uint32_t file, LineTally& tally, std::map<std::string, std::size_t>& unknown) {
    auto& summary = evidence.files[file];
    summary.lines += tally.lines_read;
    summary.records += tally.records;
    summary.duplicates += tally.duplicates;
    summary.unreadable += tally.unreadable;
    summary.truncated = summary.truncated || tally.truncated;
    for (const auto& [kind, count] : tally.unknown_kinds)
      unknown[kind] += count;
  }

  void read(const std::filesystem::path& path) {
    const auto file = static_cast<std::uint32_t>(evidence.files.size());
    // The observer sees lines in file order, so it is shown them by one thread.
    const std::size_t threads = observer ? 1 : options.parse_threads;
    detail::LineSource source(path, file, seen, {options.chunk_bytes, threads + 2});
    evidence.files.push_back({path.string()});
    paths.push_back(path.string());
    std::map<std::string, std::size_t> unknown_kinds;
    if (threads <= 1) {
      read_here(source, file, unknown_kinds);
    } else {
      read_in_parallel(source, file, threads, unknown_kinds);
    }
    for (const auto& [kind, count] : unknown_kinds) {
      evidence.issues.push_back(
          {"input.unknown_kind",
           {file, 0},
           fmt::format("{} record(s) of kind '{}' are not judged by this validator", count, kind)});
    }
  }

  void read_here(detail::LineSource& source, std::uint32_t file,
                 std::map<std::string, std::size_t>& unknown_kinds) {
    ChunkParser parser(evidence, paths, &observer);
    while (auto chunk = source.take()) {
      if (!chunk->error.empty()) throw UsageError(chunk->error);
      LineTally tally;
      parser.parse(file, *chunk, tally);
      add(file, tally, unknown_kinds);
      const bool end = chunk->end;
      source.recycle(std::move(chunk));
      if (end) break;
    }
  }

  // Worker threads parse whole chunks into evidence of their own; this thread appends each to
  // the evidence in file order, so ids, record order and every citation are those of reading
  // the lines one after another, however the threads are scheduled.
  void read_in_parallel(detail::LineSource& source, std::uint32_t file, std::size_t threads,
                        std::map<std::string, std::size_t>& unknown_kinds) {
    std::mutex mutex;
    std::condition_variable parsed_one;
    std::map<std::size_t, ParsedChunk> parsed;  // by position in the file
    std::mutex take_mutex;
    std::size_t taken = 0;
    bool taken_last = false;
    const auto work = [&] {
      while (true) {
        ParsedChunk result;
        std::size_t position = 0;
        {
          std::lock_guard lock(take_mutex);
          if (taken_last) return;
          result.chunk = source.take();
          if (!result.chunk) return;
          position = taken++;
          taken_last = result.chunk->end;
        }
        if (result.chunk->error.empty()) {
          try {
            result.part = std::make_unique<Evidence>();
            ChunkParser(*result.part, paths, nullptr).parse(file, *result.chunk, result.tally);
          } catch (...) {
            result.error = std::current_exception();
          }
        }
        {
          std::lock_guard lock(mutex);
          parsed.emplace(position, std::move(result));
        }
        parsed_one.notify_all();
      }
    };
    std::vector<std::jthread> workers;
    // Stops the workers, whether every chunk was appended or an error left some unread.
    struct Stop {
      detail::LineSource& source;
      std::vector<std::jthread>& workers;
      ~Stop() {
        source.stop();
        workers.clear();
      }
    } stop{source, workers};
    for (std::size_t i = 0; i < threads; ++i)
      workers.emplace_back(work);
    for (std::size_t position = 0;; ++position) {
      ParsedChunk next;
      {
        std::unique_lock lock(mutex);
        parsed_one.wait(lock, [&] { return parsed.contains(position); });
        next = std::move(parsed.at(position));
        parsed.erase(position);
      }
      if (!next.chunk->error.empty()) throw UsageError(next.chunk->error);
      if (next.error) std::rethrow_exception(next.error);
      detail::append_evidence(evidence, std::move(*next.part));
      add(file, next.tally, unknown_kinds);
      const bool end = next.chunk->end;
      source.recycle(std::move(next.chunk));
      if (end) break;
    }
  }
};

std::size_t RecordReader::default_parse_threads(unsigned cores) {
  return std::clamp<std::size_t>(cores, 1, 4);
}

RecordReader::RecordReader(Evidence& evidence)
    : RecordReader(evidence, {parse_threads_from_environment()}) {}
RecordReader::RecordReader(Evidence& evidence, Options options)
    : impl_(std::make_unique<Impl>(evidence, options)) {}
RecordReader::~RecordReader() = default;

void RecordReader::read_file(const std::filesystem::path& path) {
  impl_->read(path);
}

void RecordReader::observe(RecordObserver observer) {
  impl_->observer = std::move(observer);
}

}  // namespace commcert
