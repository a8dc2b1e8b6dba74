#include "validate/detail/record_parser.hpp"

#include <fmt/format.h>

#include "records/burn.hpp"
#include "records/collective.hpp"
#include "records/health.hpp"
#include "records/link.hpp"
#include "records/membw.hpp"
#include "records/p2p.hpp"
#include "records/stage.hpp"
#include "validate/detail/record_common.hpp"

namespace commcert::detail {

void record_error(const Where& where, std::string_view problem) {
  if (where.parent.empty()) throw RecordError(fmt::format("{}: {}", where.field, problem));
  throw RecordError(fmt::format("{}{}{}{}: {}", where.parent, where.element ? "[]" : "",
                                where.field.empty() ? "" : ".", where.field, problem));
}

std::size_t parser_padding() {
  return simdjson::SIMDJSON_PADDING;
}

std::string sniff_string_field(std::string_view line, std::string_view key) {
  const std::string needle = fmt::format("\"{}\":\"", key);
  const auto start = line.find(needle);
  if (start == std::string_view::npos) return {};
  const auto begin = start + needle.size();
  const auto end = line.find('"', begin);
  if (end == std::string_view::npos) return {};
  return std::string(line.substr(begin, end - begin));
}

struct RecordParser::Impl : ParseState {
  using ParseState::ParseState;
  std::string last_kind;  // of the line parse() last stored
};

namespace {

// A record of a kind this validator does not judge is still evidence of a fault when its
// status says so: it weighs on its host (and rank). A record whose common fields cannot be
// read stays a kind that is only counted.
void unknown_kind_fault(ParseState& state, od::object& object, EvidenceRef ref,
                        const std::string& kind) {
  try {
    const CommonFields c = state.read(object, [](std::string_view, od::value&) {});
    if (is_fault(*c.status)) state.add_fault(c, ref, kind, kind);
  } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): counted as its kind only
  }
}

}  // namespace

RecordParser::RecordParser(Evidence& evidence) : impl_(std::make_unique<Impl>(evidence)) {}
RecordParser::~RecordParser() = default;

const std::string& RecordParser::last_kind() const {
  return impl_->last_kind;
}

LineOutcome RecordParser::parse(const char* line, std::size_t length, std::size_t capacity,
                                EvidenceRef ref) {
  od::document document;
  if (const auto error = impl_->parser.iterate(line, length, capacity).get(document)) {
    throw SyntaxError(simdjson::error_message(error));
  }
  od::object object;
  if (const auto error = document.get_object().get(object)) {
    throw SyntaxError(fmt::format("not a JSON object ({})", simdjson::error_message(error)));
  }
  std::string_view kind;
  if (const auto error = object.find_field_unordered(RecordFields::kKind).get_string().get(kind)) {
    if (error == simdjson::NO_SUCH_FIELD) record_error(RecordFields::kKind, "missing");
    throw SyntaxError(simdjson::error_message(error));
  }
  const std::string kind_text(kind);  // the parser's string buffer is reused below
  if (const auto error = object.reset().error()) throw SyntaxError(simdjson::error_message(error));

  try {
    // One parser per kind (collective_parser.cpp, burn_parser.cpp, ...).
    if (kind_text == CollectiveRecord::kKind) {
      parse_collective(*impl_, object, ref);
    } else if (kind_text == BurnRecord::kKind) {
      parse_burn(*impl_, object, ref);
    } else if (kind_text == MembwRecord::kKind) {
      parse_membw(*impl_, object, ref);
    } else if (kind_text == HealthRecord::kKind) {
      parse_health(*impl_, object, ref);
    } else if (kind_text == LinkRecord::kKind) {
      parse_link(*impl_, object, ref);
    } else if (kind_text == P2pRecord::kKind) {
      parse_p2p(*impl_, object, ref);
    } else if (kind_text == RunRecord::kKind) {
      parse_run(*impl_, object, ref);
    } else {
      unknown_kind_fault(*impl_, object, ref, kind_text);
      return LineOutcome::kUnknownKind;
    }
  } catch (const RecordError& error) {
    // On-Demand finds broken JSON only when it walks there: tell syntax from content apart.
    if (std::string_view(error.what()).find("TAPE_ERROR") != std::string_view::npos ||
        std::string_view(error.what()).find("INCOMPLETE") != std::string_view::npos ||
        std::string_view(error.what()).find("UNCLOSED") != std::string_view::npos) {
      throw SyntaxError(error.what());
    }
    throw;
  }
  if (document.current_location().error() != simdjson::OUT_OF_BOUNDS) {
    throw SyntaxError("trailing content after the record");
  }
  impl_->last_kind = kind_text;
  return LineOutcome::kStored;
}

}  // namespace commcert::detail
