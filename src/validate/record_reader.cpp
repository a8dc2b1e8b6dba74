#include "validate/record_reader.hpp"

#include <map>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/node_identity.hpp"
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

struct RecordReader::Impl {
  explicit Impl(Evidence& e) : evidence(e), parser(e) {}

  Evidence& evidence;
  detail::RecordParser parser;
  detail::LineSet seen;  // every line read so far, to count exact repeats
  std::map<std::string, std::size_t> unknown_kinds;  // per file, reset for each
  RecordObserver observer;

  void line(std::uint32_t file, const detail::SourceLine& source) {
    auto& summary = evidence.files[file];
    const std::string_view text(source.data, source.length);
    const EvidenceRef ref{file, source.number};
    const bool terminated = source.terminated;
    if (source.duplicate_of) {
      if (summary.duplicates++ == 0) {
        const auto& first = *source.duplicate_of;
        evidence.issues.push_back(
            {"input.duplicate_records", ref,
             fmt::format(
                 "repeats {}:{} (exact copies are read once; see the file's duplicate count)",
                 evidence.files[first.file].path, first.line)});
      }
      return;
    }
    try {
      const auto outcome = parser.parse(text.data(), text.size(), source.capacity, ref);
      if (outcome == detail::LineOutcome::kUnknownKind) {
        ++unknown_kinds[detail::sniff_string_field(text, "kind")];
      } else {
        ++summary.records;
        if (observer) observer(ref, parser.last_kind(), text);
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
  void lost(EvidenceRef ref, std::string_view text, std::string code, std::string what) {
    auto& summary = evidence.files[ref.file];
    ++summary.unreadable;
    if (code == "input.truncated") summary.truncated = true;
    InputIssue issue{std::move(code), ref, std::move(what)};
    const std::string kind = detail::sniff_string_field(text, "kind");
    const std::string host = detail::sniff_string_field(text, "host");
    const std::string run_id = detail::sniff_string_field(text, "run_id");
    // Collective records are written by rank 0 about every rank: their host is not the subject.
    // A host that is no valid node name names no node: the loss is the run's.
    const bool named = !host.empty() && !node_name_problem(host);
    if (named && (kind == "burn" || kind == "membw" || kind == "health")) {
      issue.node = evidence.nodes.intern(host);
    } else if (!run_id.empty()) {
      issue.run = evidence.run_index(run_id);
    }
    evidence.issues.push_back(std::move(issue));
  }

  void read(const std::filesystem::path& path) {
    const auto file = static_cast<std::uint32_t>(evidence.files.size());
    detail::LineSource source(path, file, seen);
    evidence.files.push_back({path.string()});
    unknown_kinds.clear();
    detail::LineSource::Batch batch;
    while (source.next(batch)) {
      evidence.files[file].lines += batch.lines_read;
      for (const auto& line_in_file : batch.lines)
        line(file, line_in_file);
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

void RecordReader::observe(RecordObserver observer) {
  impl_->observer = std::move(observer);
}

}  // namespace commcert
