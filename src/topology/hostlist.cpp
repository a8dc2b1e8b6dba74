#include "topology/hostlist.hpp"

#include <charconv>
#include <cstdint>
#include <optional>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/printable.hpp"
#include "topology/detail/input_lines.hpp"

namespace commcert {
namespace {

// first..last, written with `width` digits (the lower bound's, leading zeros included).
struct Range {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  std::size_t width = 0;
};

// One bracket: its ranges in the order written.
using RangeList = std::vector<Range>;

// One comma-separated term: literal text around each bracket (literals.size() ==
// brackets.size() + 1; a literal may be empty).
struct Term {
  std::vector<std::string_view> literals;
  std::vector<RangeList> brackets;
};

class HostlistReader {
 public:
  HostlistReader(std::string_view expression, std::string_view origin)
      : expression_(expression), origin_(origin) {}

  [[noreturn]] void fail(std::string_view why) const {
    throw UsageError(fmt::format("{}: hostlist '{}': {}", origin_, printable(expression_), why));
  }

  // The expression's terms: split at the commas outside brackets.
  std::vector<Term> terms() const {
    if (expression_.empty()) fail("empty");
    std::vector<Term> terms;
    std::size_t start = 0;
    bool in_bracket = false;
    for (std::size_t i = 0; i < expression_.size(); ++i) {
      const char c = expression_[i];
      if (c == '[') {
        if (in_bracket) fail("'[' inside brackets");
        in_bracket = true;
      } else if (c == ']') {
        if (!in_bracket) fail("']' without '['");
        in_bracket = false;
      } else if (c == ',' && !in_bracket) {
        terms.push_back(term(expression_.substr(start, i - start)));
        start = i + 1;
      }
    }
    if (in_bracket) fail("'[' without ']'");
    terms.push_back(term(expression_.substr(start)));
    return terms;
  }

 private:
  Term term(std::string_view text) const {
    if (text.empty()) fail("an empty name (a comma at either end, or two in a row)");
    Term term;
    std::size_t literal_start = 0;
    while (true) {
      const std::size_t open = text.find('[', literal_start);
      if (open == std::string_view::npos) break;
      const std::size_t close = text.find(']', open);  // balanced: checked by terms()
      term.literals.push_back(text.substr(literal_start, open - literal_start));
      term.brackets.push_back(ranges(text.substr(open + 1, close - open - 1)));
      literal_start = close + 1;
    }
    term.literals.push_back(text.substr(literal_start));
    return term;
  }

  RangeList ranges(std::string_view inside) const {
    if (inside.empty()) fail("empty brackets '[]'");
    RangeList list;
    std::size_t start = 0;
    while (true) {
      const std::size_t comma = inside.find(',', start);
      list.push_back(range(inside.substr(start, comma - start)));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    return list;
  }

  Range range(std::string_view text) const {
    if (text.empty()) fail("an empty range inside brackets");
    const std::size_t dash = text.find('-');
    const std::string_view low = text.substr(0, dash);
    const std::string_view high = dash == std::string_view::npos ? low : text.substr(dash + 1);
    Range range{number(low, text), number(high, text), low.size()};
    if (range.first > range.last) {
      fail(fmt::format("range {} is reversed (the lower bound comes first)", printable(text)));
    }
    return range;
  }

  std::uint64_t number(std::string_view digits, std::string_view range) const {
    std::uint64_t value = 0;
    const char* end = digits.data() + digits.size();
    const auto [stop, error] = std::from_chars(digits.data(), end, value);
    const bool only_digits =
        !digits.empty() && digits.find_first_not_of("0123456789") == std::string_view::npos;
    if (!only_digits || stop != end) {
      fail(fmt::format("'{}' is not a number or a range of numbers", printable(range)));
    }
    if (error == std::errc::result_out_of_range) {
      fail(fmt::format("{} is too large a number", printable(digits)));
    }
    return value;
  }

  std::string_view expression_;
  std::string_view origin_;
};

// How many numbers a bracket holds, or nullopt when more than `limit`.
std::optional<std::uint64_t> bracket_size(const RangeList& ranges, std::uint64_t limit) {
  std::uint64_t size = 0;
  for (const Range& range : ranges) {
    const std::uint64_t span = range.last - range.first;  // +1 could overflow at 2^64 - 1
    if (span >= limit - size) return std::nullopt;        // size + span + 1 > limit
    size += span + 1;
  }
  return size;
}

// How many names a term expands to, or nullopt when more than `limit`.
std::optional<std::uint64_t> term_size(const Term& term, std::uint64_t limit) {
  std::uint64_t size = 1;
  for (const RangeList& ranges : term.brackets) {
    const auto numbers = bracket_size(ranges, limit);
    if (!numbers || *numbers > limit / size) return std::nullopt;
    size *= *numbers;
  }
  if (size > limit) return std::nullopt;
  return size;
}

// The term's first name, made before the others: a bound written with thousands of leading
// zeros is refused by its length here, before a million names of that length are made.
std::string first_name(const Term& term) {
  std::string name(term.literals[0]);
  for (std::size_t i = 0; i < term.brackets.size(); ++i) {
    const Range& range = term.brackets[i].front();
    name += fmt::format("{:0{}}", range.first, range.width);
    name += term.literals[i + 1];
  }
  return name;
}

// The numbers of one bracket, each written at its range's width.
std::vector<std::string> bracket_numbers(const RangeList& ranges) {
  std::vector<std::string> numbers;
  for (const Range& range : ranges) {
    for (std::uint64_t value = range.first;; ++value) {
      numbers.push_back(fmt::format("{:0{}}", value, range.width));
      if (value == range.last) break;  // not `<= last`: last may be 2^64 - 1
    }
  }
  return numbers;
}

// Appends the term's names: the cross product of its brackets, leftmost slowest.
void expand_term(const Term& term, std::vector<std::string>& names) {
  std::vector<std::vector<std::string>> numbers;
  for (const RangeList& ranges : term.brackets)
    numbers.push_back(bracket_numbers(ranges));
  std::vector<std::size_t> position(numbers.size(), 0);
  while (true) {
    std::string name(term.literals[0]);
    for (std::size_t i = 0; i < numbers.size(); ++i) {
      name += numbers[i][position[i]];
      name += term.literals[i + 1];
    }
    names.push_back(std::move(name));
    // Advance the rightmost bracket; carry to the left when it wraps.
    std::size_t i = numbers.size();
    while (i > 0 && ++position[i - 1] == numbers[i - 1].size()) {
      position[i - 1] = 0;
      --i;
    }
    if (i == 0) return;
  }
}

}  // namespace

std::vector<std::string> expand_hostlist(std::string_view expression, std::string_view origin,
                                         std::size_t limit) {
  const HostlistReader reader(expression, origin);
  const std::vector<Term> terms = reader.terms();
  std::uint64_t total = 0;
  for (const Term& term : terms) {
    const auto size = term_size(term, limit - total);
    if (!size) reader.fail(fmt::format("expands to more than {} names", limit));
    total += *size;
  }
  for (const Term& term : terms)
    topology_detail::validate_name_on_one_line(first_name(term), origin);
  std::vector<std::string> names;
  names.reserve(total);
  for (const Term& term : terms)
    expand_term(term, names);
  for (const std::string& name : names)
    topology_detail::validate_name_on_one_line(name, origin);
  return names;
}

}  // namespace commcert
