#include "validate/record_reader.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <map>
#include <unistd.h>
#include <unordered_map>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "validate/detail/record_parser.hpp"

namespace commcert {
namespace {

// Large enough that read(2) calls are few; lines longer than this grow the buffer.
constexpr std::size_t kChunkBytes = std::size_t{16} << 20;

class FileDescriptor {
 public:
  explicit FileDescriptor(const std::filesystem::path& path)
      : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.back() == '\r' || text.back() == ' ' || text.back() == '\t')) {
    text.remove_suffix(1);
  }
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t'))
    text.remove_prefix(1);
  return text;
}

std::string excerpt(std::string_view line) {
  constexpr std::size_t kMax = 60;
  if (line.size() <= kMax) return std::string(line);
  return fmt::format("{}...", line.substr(0, kMax));
}

}  // namespace

struct RecordReader::Impl {
  explicit Impl(Evidence& e) : evidence(e), parser(e) {}

  Evidence& evidence;
  detail::RecordParser parser;
  // Hash of every line read so far -> where it was first seen. 64-bit hashes of at most a few
  // million lines: a false "duplicate" is about as likely as a cosmic-ray bit flip.
  std::unordered_map<std::size_t, EvidenceRef> seen;
  std::map<std::string, std::size_t> unknown_kinds;  // per file, reset for each
  std::vector<char> buffer;

  void line(std::uint32_t file, std::uint32_t number, const char* data, std::size_t length,
            std::size_t capacity, bool terminated) {
    auto& summary = evidence.files[file];
    ++summary.lines;
    const std::string_view text = trim(std::string_view(data, length));
    if (text.empty()) return;
    const EvidenceRef ref{file, number};
    const std::size_t hash = std::hash<std::string_view>{}(text);
    if (const auto [it, inserted] = seen.emplace(hash, ref); !inserted) {
      if (summary.duplicates++ == 0) {
        const auto& first = it->second;
        evidence.issues.push_back(
            {"input.duplicate_records", ref,
             fmt::format(
                 "repeats {}:{} (exact copies are read once; see the file's duplicate count)",
                 evidence.files[first.file].path, first.line)});
      }
      return;
    }
    const auto offset = static_cast<std::size_t>(text.data() - data);
    try {
      const auto outcome = parser.parse(text.data(), text.size(), capacity - offset, ref);
      if (outcome == detail::LineOutcome::kUnknownKind) {
        ++unknown_kinds[detail::sniff_string_field(text, "kind")];
      } else {
        ++summary.records;
      }
    } catch (const detail::UnsupportedSchema& error) {
      lost(ref, text, "input.unsupported_schema", error.what());
    } catch (const detail::SyntaxError& error) {
      lost(ref, text, terminated ? "input.unparsable" : "input.truncated",
           fmt::format("{}: {}", error.what(), excerpt(text)));
    } catch (const detail::RecordError& error) {
      lost(ref, text, "input.unparsable", error.what());
    }
  }

  // A line whose evidence is lost: attribute it as narrowly as its text allows.
  void lost(EvidenceRef ref, std::string_view text, std::string code, std::string detail) {
    auto& summary = evidence.files[ref.file];
    ++summary.unreadable;
    if (code == "input.truncated") summary.truncated = true;
    InputIssue issue{std::move(code), ref, std::move(detail)};
    const std::string kind = detail::sniff_string_field(text, "kind");
    const std::string host = detail::sniff_string_field(text, "host");
    const std::string run_id = detail::sniff_string_field(text, "run_id");
    // Collective records are written by rank 0 about every rank: their host is not the subject.
    if (!host.empty() && (kind == "burn" || kind == "membw" || kind == "health")) {
      issue.node = evidence.nodes.intern(host);
    } else if (!run_id.empty()) {
      issue.run = evidence.run_index(run_id);
    }
    evidence.issues.push_back(std::move(issue));
  }

  void read(const std::filesystem::path& path) {
    FileDescriptor fd(path);
    if (fd.get() < 0) {
      throw UsageError(fmt::format("cannot open {}: {}", path.string(), std::strerror(errno)));
    }
    const auto file = static_cast<std::uint32_t>(evidence.files.size());
    evidence.files.push_back({path.string()});
    unknown_kinds.clear();

    const std::size_t padding = detail::parser_padding();
    if (buffer.size() < kChunkBytes + padding) buffer.resize(kChunkBytes + padding);
    std::size_t filled = 0;  // bytes of data in buffer (a partial line carried over, then new)
    std::uint32_t line_number = 0;
    bool eof = false;
    while (!eof) {
      if (buffer.size() - padding - filled < kChunkBytes / 2) {
        buffer.resize(buffer.size() * 2);  // one line longer than the chunk
      }
      const ssize_t got =
          ::read(fd.get(), buffer.data() + filled, buffer.size() - padding - filled);
      if (got < 0) {
        if (errno == EINTR) continue;
        throw UsageError(fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
      }
      eof = got == 0;
      filled += static_cast<std::size_t>(got);
      std::size_t start = 0;
      while (start < filled) {
        const void* newline = std::memchr(buffer.data() + start, '\n', filled - start);
        if (newline == nullptr) break;
        const auto end =
            static_cast<std::size_t>(static_cast<const char*>(newline) - buffer.data());
        line(file, ++line_number, buffer.data() + start, end - start, buffer.size() - start, true);
        start = end + 1;
      }
      if (eof && start < filled) {
        line(file, ++line_number, buffer.data() + start, filled - start, buffer.size() - start,
             false);
        start = filled;
      }
      std::memmove(buffer.data(), buffer.data() + start, filled - start);
      filled -= start;
    }
    for (const auto& [kind, count] : unknown_kinds) {
      evidence.issues.push_back(
          {"input.unknown_kind",
           {file, 0},
           fmt::format("{} record(s) of kind '{}' are not judged by this validator", count, kind)});
    }
  }
};

RecordReader::RecordReader(Evidence& evidence) : impl_(std::make_unique<Impl>(evidence)) {}
RecordReader::~RecordReader() = default;

void RecordReader::read_file(const std::filesystem::path& path) {
  impl_->read(path);
}

}  // namespace commcert
