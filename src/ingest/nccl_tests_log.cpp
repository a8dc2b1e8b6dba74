#include "ingest/nccl_tests_log.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

namespace commcert {
namespace {

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

std::vector<std::string_view> split(std::string_view text) {
  std::vector<std::string_view> tokens;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t'))
      ++i;
    const std::size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t')
      ++i;
    if (i > start) tokens.push_back(text.substr(start, i - start));
  }
  return tokens;
}

std::optional<double> parse_number(std::string_view token) {
  double value = 0;
  const auto* end = token.data() + token.size();
  const auto [ptr, error] = std::from_chars(token.data(), end, value);
  if (error != std::errc() || ptr != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<std::int64_t> parse_integer(std::string_view token) {
  std::int64_t value = 0;
  const auto* end = token.data() + token.size();
  const auto [ptr, error] = std::from_chars(token.data(), end, value);
  if (error != std::errc() || ptr != end) return std::nullopt;
  return value;
}

// A count written in the log, or nullopt when it does not fit an int (a corrupted line must be
// reported, not end the program with std::out_of_range).
std::optional<int> parse_count(std::string_view digits) {
  int value = 0;
  const auto* end = digits.data() + digits.size();
  const auto [ptr, error] = std::from_chars(digits.data(), end, value);
  if (error != std::errc() || ptr != end) return std::nullopt;
  return value;
}

// Half a unit of the last digit a number was printed with: 0.005 for "12.34", 0.5 for "12",
// 5000 for "1e+04", 0.05 for "1.5e-01".
double half_unit(std::string_view token) {
  const auto e = token.find_first_of("eE");
  const std::string_view mantissa = token.substr(0, e);
  const auto dot = mantissa.find('.');
  int exponent = dot == std::string_view::npos ? 0 : -static_cast<int>(mantissa.size() - dot - 1);
  if (e != std::string_view::npos) {
    std::string_view power = token.substr(e + 1);
    if (power.starts_with('+')) power.remove_prefix(1);
    if (const auto value = parse_integer(power))
      exponent += static_cast<int>(std::clamp<std::int64_t>(*value, -300, 300));
  }
  return 0.5 * std::pow(10.0, exponent);
}

bool starts_with_digit(std::string_view text) {
  return !text.empty() && text[0] >= '0' && text[0] <= '9';
}

// What std::regex's \s and \d meant in the "C" locale, which the reader's patterns were
// written with: the hand-written scanning below reads exactly the lines they matched.
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// A cursor over one line for the fixed shapes of nccl-tests' comment lines. Scanning by hand,
// not std::regex: the regexes made every comment line cost tens of microseconds (45 inputs/s
// under the fuzzer's sanitizers), for patterns that are all a fixed prefix, words and numbers.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : rest_(text) {}

  // Skips white space, as "\s*".
  void skip_spaces() { (void)take_while(is_space); }
  // At least one white space character, as "\s+".
  [[nodiscard]] bool spaces() { return !take_while(is_space).empty(); }
  [[nodiscard]] bool literal(std::string_view word) {
    if (!rest_.starts_with(word)) return false;
    rest_.remove_prefix(word.size());
    return true;
  }
  // The longest run of digits ("\d+"), empty when there is none.
  [[nodiscard]] std::string_view digits() { return take_while(is_digit); }
  // The longest run of non-space characters ("\S+"), empty when there is none.
  [[nodiscard]] std::string_view word() {
    return take_while([](char c) { return !is_space(c); });
  }
  // Everything before the next `end`, which is consumed too; nullopt when there is none.
  [[nodiscard]] std::optional<std::string_view> up_to(char end) {
    const auto at = rest_.find(end);
    if (at == std::string_view::npos) return std::nullopt;
    const std::string_view before = rest_.substr(0, at);
    rest_.remove_prefix(at + 1);
    return before;
  }
  // The rest of the line when "(.*)$" would match it: a regex's '.' takes no '\r' or '\n'.
  [[nodiscard]] std::optional<std::string_view> to_end() const {
    if (rest_.find_first_of("\r\n") != std::string_view::npos) return std::nullopt;
    return rest_;
  }

 private:
  template <typename Predicate>
  std::string_view take_while(Predicate predicate) {
    std::size_t n = 0;
    while (n < rest_.size() && predicate(rest_[n]))
      ++n;
    const std::string_view taken = rest_.substr(0, n);
    rest_.remove_prefix(n);
    return taken;
  }

  std::string_view rest_;
};

// "#", any white space, then `words`: how every comment line nccl-tests prints starts. The
// cursor stands after `words`; nullopt when the line does not start so.
std::optional<Cursor> comment_starting(std::string_view text, std::string_view words) {
  Cursor at(text);
  if (!at.literal("#")) return std::nullopt;
  at.skip_spaces();
  if (!at.literal(words)) return std::nullopt;
  return at;
}

// The non-empty word after `words` and white space (`spaced`) or directly after them.
std::optional<std::string_view> word_after(std::string_view text, std::string_view words,
                                           bool spaced) {
  auto at = comment_starting(text, words);
  if (!at) return std::nullopt;
  if (spaced) at->skip_spaces();
  const std::string_view word = at->word();
  if (word.empty()) return std::nullopt;
  return word;
}

// "# <words> : <digits or word>": the out-of-bounds and average footer lines.
std::optional<std::string_view> footer_value(std::string_view text, std::string_view words,
                                             bool digits) {
  auto at = comment_starting(text, words);
  if (!at) return std::nullopt;
  at->skip_spaces();
  if (!at->literal(":")) return std::nullopt;
  at->skip_spaces();
  const std::string_view value = digits ? at->digits() : at->word();
  if (value.empty()) return std::nullopt;
  return value;
}

bool is_parameter_line(std::string_view text) {
  auto at = comment_starting(text, "nThread");
  return at && at->spaces() && !at->digits().empty();
}

// "# error: TEXT" with TEXT not blank.
bool is_error_line(std::string_view text) {
  auto at = comment_starting(text, "error:");
  if (!at) return false;
  at->skip_spaces();
  const auto rest = at->to_end();
  return rest && !rest->empty();
}

bool is_failure_line(std::string_view text) {
  for (const std::string_view failure :
       {"Test NCCL failure", "Test CUDA failure", "Test timeout", "Test failure"}) {
    if (text.find(failure) != std::string_view::npos) return true;
  }
  return false;
}

// The fields of `#  Rank  R [Group  G] Pid  P on HOST device  D [PCI] NAME`, as printed.
struct DeviceFields {
  std::string_view rank, pid, host, device, pci, name;
};

// A number after white space, followed by white space: "\s+(\d+)\s+" after a word.
std::optional<std::string_view> spaced_number(Cursor& at) {
  if (!at.spaces()) return std::nullopt;
  const std::string_view number = at.digits();
  if (number.empty() || !at.spaces()) return std::nullopt;
  return number;
}

std::optional<DeviceFields> device_fields(std::string_view text) {
  auto at = comment_starting(text, "Rank");
  if (!at) return std::nullopt;
  DeviceFields f;
  const auto rank = spaced_number(*at);
  if (!rank) return std::nullopt;
  f.rank = *rank;
  if (at->literal("Group") && !spaced_number(*at)) return std::nullopt;
  if (!at->literal("Pid")) return std::nullopt;
  const auto pid = spaced_number(*at);
  if (!pid || !at->literal("on") || !at->spaces()) return std::nullopt;
  f.pid = *pid;
  f.host = at->word();
  if (f.host.empty() || !at->spaces() || !at->literal("device")) return std::nullopt;
  const auto device = spaced_number(*at);
  if (!device || !at->literal("[")) return std::nullopt;
  f.device = *device;
  const auto pci = at->up_to(']');
  if (!pci) return std::nullopt;
  f.pci = *pci;
  at->skip_spaces();
  const auto name = at->to_end();
  if (!name) return std::nullopt;
  f.name = *name;
  return f;
}

// The count after the first `key` (then white space) that `accept` takes at its offset: a
// regex search for "KEY\s*(\d+)".
template <typename Accept>
std::optional<std::string_view> number_after(std::string_view text, std::string_view key,
                                             Accept accept) {
  for (auto at = text.find(key); at != std::string_view::npos; at = text.find(key, at + 1)) {
    if (!accept(at)) continue;
    Cursor after(text.substr(at + key.size()));
    after.skip_spaces();
    const std::string_view digits = after.digits();
    if (!digits.empty()) return digits;
  }
  return std::nullopt;
}

// The timed "iters:" of a parameter line: a word of its own (at the start or after white
// space), and not the end of "warmup iters:" or "agg iters:".
std::optional<std::string_view> timed_iterations(std::string_view text) {
  return number_after(text, "iters:", [text](std::size_t at) {
    if (at == 0) return true;
    if (!is_space(text[at - 1])) return false;
    const std::string_view before = text.substr(0, at - 1);
    return text[at - 1] != ' ' || (!before.ends_with("warmup") && !before.ends_with("agg"));
  });
}

// A line shaped like a table row (size, count, a type name, then at least five numbers or
// N/A), told apart from launcher and shell output that happens to start with a digit.
bool looks_like_row(const std::vector<std::string_view>& fields) {
  if (fields.size() < 8 || !parse_integer(fields[0]) || !parse_integer(fields[1])) return false;
  const std::string_view type = fields[2];
  if (!std::isalpha(static_cast<unsigned char>(type.front()))) return false;
  const auto numbers = std::count_if(fields.begin() + 3, fields.end(), [](std::string_view f) {
    return f == "N/A" || parse_number(f).has_value();
  });
  return numbers >= 5;
}

// Where each known column sits in a table of this header.
struct Layout {
  std::size_t size = SIZE_MAX, count = SIZE_MAX, type = SIZE_MAX, redop = SIZE_MAX, root = SIZE_MAX;
  struct Placement {
    std::size_t time = SIZE_MAX, algbw = SIZE_MAX, busbw = SIZE_MAX, wrong = SIZE_MAX;
    std::size_t i_min = SIZE_MAX, i_max = SIZE_MAX, i_p99 = SIZE_MAX, i_cv = SIZE_MAX;
  };
  std::vector<Placement> placements;  // out-of-place, then in-place
  std::size_t columns = 0;
  bool wrong_is_count = true;
};

bool is_time_column(std::string_view name) {
  return name == "time" || name == "cputime";
}

// The column header: `# size count type redop root time algbw busbw #wrong time ...`.
std::optional<Layout> read_header(const std::vector<std::string_view>& names) {
  Layout layout;
  layout.columns = names.size();
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string_view name = names[i];
    if (is_time_column(name)) {
      layout.placements.emplace_back();
      layout.placements.back().time = i;
      continue;
    }
    if (layout.placements.empty()) {
      if (name == "size")
        layout.size = i;
      else if (name == "count")
        layout.count = i;
      else if (name == "type")
        layout.type = i;
      else if (name == "redop")
        layout.redop = i;
      else if (name == "root")
        layout.root = i;
      continue;
    }
    Layout::Placement& p = layout.placements.back();
    if (name == "algbw")
      p.algbw = i;
    else if (name == "busbw")
      p.busbw = i;
    else if (name == "#wrong")
      p.wrong = i;
    else if (name == "error") {
      p.wrong = i;
      layout.wrong_is_count = false;
    } else if (name == "i_min")
      p.i_min = i;
    else if (name == "i_max")
      p.i_max = i;
    else if (name == "i_p99")
      p.i_p99 = i;
    else if (name == "i_cv%" || name == "i_cv")
      p.i_cv = i;
  }
  const bool complete =
      layout.size != SIZE_MAX && layout.count != SIZE_MAX && layout.type != SIZE_MAX &&
      !layout.placements.empty() && layout.placements.size() <= 2 &&
      std::all_of(
          layout.placements.begin(), layout.placements.end(),
          [](const Layout::Placement& p) { return p.algbw != SIZE_MAX && p.busbw != SIZE_MAX; });
  if (!complete) return std::nullopt;
  return layout;
}

bool looks_like_header(const std::vector<std::string_view>& names) {
  return std::find(names.begin(), names.end(), "size") != names.end() &&
         std::find(names.begin(), names.end(), "count") != names.end() &&
         std::find_if(names.begin(), names.end(), is_time_column) != names.end();
}

// A row's fields against its header. -S appends a date and a time (two fields, one column);
// hypercube_perf prints an empty redop (one field fewer).
std::optional<std::vector<std::string_view>> align_fields(std::vector<std::string_view> fields,
                                                          const Layout& layout) {
  if (fields.size() == layout.columns + 1 && fields.back().find(':') != std::string_view::npos &&
      fields[fields.size() - 2].find('-') != std::string_view::npos) {
    fields.pop_back();
  }
  if (fields.size() + 1 == layout.columns && layout.redop != SIZE_MAX)
    fields.insert(fields.begin() + static_cast<std::ptrdiff_t>(layout.redop), std::string_view());
  if (fields.size() != layout.columns) return std::nullopt;
  return fields;
}

std::optional<double> optional_column(const std::vector<std::string_view>& fields,
                                      std::size_t index) {
  if (index == SIZE_MAX) return std::nullopt;
  return parse_number(fields[index]);
}

// Returns why the placement cannot be read, empty when it was.
std::string read_placement(const std::vector<std::string_view>& fields,
                           const Layout::Placement& columns, bool wrong_is_count,
                           NcclTestsPlacement& placement) {
  const auto time = parse_number(fields[columns.time]);
  const auto algbw = parse_number(fields[columns.algbw]);
  const auto busbw = parse_number(fields[columns.busbw]);
  if (!time || !algbw || !busbw) {
    return fmt::format("time/algbw/busbw '{}' '{}' '{}' are not numbers", fields[columns.time],
                       fields[columns.algbw], fields[columns.busbw]);
  }
  if (*time <= 0 || *algbw < 0 || *busbw < 0)
    return fmt::format("time {} or a bandwidth is out of range", *time);
  placement.time_us = *time;
  placement.algbw_gb_s = *algbw;
  placement.busbw_gb_s = *busbw;
  placement.bandwidth_half_unit =
      std::max(half_unit(fields[columns.algbw]), half_unit(fields[columns.busbw]));
  if (columns.wrong != SIZE_MAX && wrong_is_count) {
    const std::string_view wrong = fields[columns.wrong];
    if (wrong != "N/A") {
      const auto value = parse_number(wrong);
      if (!value || *value < 0) return fmt::format("#wrong '{}' is not a count", wrong);
      placement.wrong_elements = std::round(*value);
    }
  }
  placement.iteration_min_us = optional_column(fields, columns.i_min);
  placement.iteration_max_us = optional_column(fields, columns.i_max);
  placement.iteration_p99_us = optional_column(fields, columns.i_p99);
  placement.iteration_cv_pct = optional_column(fields, columns.i_cv);
  return {};
}

class Parser {
 public:
  NcclTestsLog parse(std::string_view text) {
    std::size_t number = 0;
    std::size_t start = 0;
    while (start < text.size()) {
      auto end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      ++number;
      line(trim(strip_launcher_prefix(text.substr(start, end - start))), number);
      start = end + 1;
    }
    finish_run();
    return std::move(log_);
  }

 private:
  void line(std::string_view text, std::size_t number) {
    if (text.empty()) return;
    if (text[0] == '#') {
      comment(text, number);
      return;
    }
    if (is_failure_line(text)) {
      current(number).errors.push_back({number, std::string(text)});
      return;
    }
    if (text.find("NCCL INFO") != std::string_view::npos ||
        text.find("NCCL WARN") != std::string_view::npos) {
      log_.foreign_lines.push_back(number);
      return;
    }
    const auto fields = split(text);
    if (!run_ || !layout_) {
      // A pasted table without its header: the row is there, but which column is which is not.
      if (looks_like_row(fields)) {
        log_.unreadable.push_back(
            {number, layout_failed_
                         ? "a result row under a column header that could not be read"
                         : "a result row with no column header before it ('#  size  count  "
                           "type  redop  root  time  algbw  busbw ...'): its columns are "
                           "unknown"});
      } else {
        log_.foreign_lines.push_back(number);
      }
      return;
    }
    if (!starts_with_digit(fields.front())) {
      log_.foreign_lines.push_back(number);
      return;
    }
    row(fields, number);
  }

  void comment(std::string_view text, std::size_t number) {
    if (const auto version = word_after(text, "nccl-tests version ", false)) {
      new_run(number);
      run_->version = std::string(*version);
    } else if (const auto program = word_after(text, "Collective test starting:", true)) {
      // The version line, when there is one, opened this test already.
      if (!run_ || !run_->program.empty() || started_table()) new_run(number);
      run_->program = std::string(*program);
    } else if (is_parameter_line(text)) {
      if (!run_ || run_->iterations || started_table()) new_run(number);
      read_parameters(text, number);
    } else if (const auto fields = device_fields(text)) {
      device(*fields, number);
    } else if (const auto digits = footer_value(text, "Out of bounds values", true)) {
      const auto wrong = parse_integer(*digits);
      if (!wrong) {
        log_.unreadable.push_back({number, "the out-of-bounds count is out of range"});
      } else {
        current(number).out_of_bounds = *wrong;
      }
    } else if (const auto average = footer_value(text, "Avg bus bandwidth", false)) {
      const auto value = parse_number(*average);
      if (!value) {
        log_.unreadable.push_back({number, "the average bus bandwidth is not a number"});
      } else {
        current(number).avg_busbw_gb_s = *value;
        check_average(number);
      }
      current(number).concluded = true;
    } else if (comment_starting(text, "Collective test concluded")) {
      current(number).concluded = true;
    } else if (is_error_line(text)) {
      current(number).errors.push_back({number, std::string(text)});
    } else {
      auto names = split(text.substr(1));
      if (!names.empty() && names.front() == "#") names.erase(names.begin());
      if (looks_like_header(names)) header(names, number);
    }
  }

  void device(const DeviceFields& fields, std::size_t number) {
    const auto rank = parse_count(fields.rank);
    const auto pid = parse_count(fields.pid);
    const auto index = parse_count(fields.device);
    if (!rank || !pid || !index) {
      log_.unreadable.push_back(
          {number, "a device line whose rank, pid or device is out of range"});
      ++current(number).unreadable_devices;
      return;
    }
    NcclTestsDevice device;
    device.rank = *rank;
    device.pid = *pid;
    device.host = std::string(fields.host);
    device.device = *index;
    device.pci_bus_id = std::string(fields.pci);
    device.name = std::string(trim(fields.name));
    device.line = number;
    current(number).devices.push_back(std::move(device));
  }

  void read_parameters(std::string_view text, std::size_t number) {
    const auto count = [&](std::optional<int>& field, std::optional<std::string_view> digits,
                           const char* what) {
      if (!digits) return;
      field = parse_count(*digits);
      if (!field) log_.unreadable.push_back({number, fmt::format("{} is out of range", what)});
    };
    const auto anywhere = [](std::size_t) { return true; };
    count(run_->iterations, timed_iterations(text), "iters");
    count(run_->warmup_iterations, number_after(text, "warmup iters:", anywhere), "warmup iters");
    count(run_->validation, number_after(text, "validation:", anywhere), "validation");
  }

  void header(const std::vector<std::string_view>& names, std::size_t number) {
    NcclTestsRun& run = current(number);
    layout_ = read_header(names);
    layout_failed_ = !layout_;
    if (!layout_) {
      log_.unreadable.push_back({number,
                                 "a table header without size, count, type, time, "
                                 "algbw and busbw columns"});
      return;
    }
    run.columns.assign(names.begin(), names.end());
    run.wrong_is_count = layout_->wrong_is_count;
  }

  void row(const std::vector<std::string_view>& raw, std::size_t number) {
    const auto fields = align_fields(raw, *layout_);
    if (!fields) {
      log_.unreadable.push_back(
          {number, fmt::format("{} fields where the table header has {} columns (a cut or "
                               "interleaved line?)",
                               raw.size(), layout_->columns)});
      return;
    }
    const auto& f = *fields;
    NcclTestsRow row;
    row.line = number;
    const auto size = parse_integer(f[layout_->size]);
    const auto count = parse_integer(f[layout_->count]);
    if (!size || !count || *size < 0 || *count < 0) {
      log_.unreadable.push_back({number, "size or count is not a whole number"});
      return;
    }
    row.size_bytes = static_cast<std::uint64_t>(*size);
    row.count = static_cast<std::uint64_t>(*count);
    row.type = std::string(f[layout_->type]);
    if (layout_->redop != SIZE_MAX && f[layout_->redop] != "none")
      row.redop = std::string(f[layout_->redop]);
    if (layout_->root != SIZE_MAX) {
      const auto root = parse_integer(f[layout_->root]);
      if (!root) {
        log_.unreadable.push_back(
            {number, fmt::format("root '{}' is not a number", f[layout_->root])});
        return;
      }
      if (*root >= 0) row.root = static_cast<int>(*root);
    }
    for (std::size_t p = 0; p < layout_->placements.size(); ++p) {
      NcclTestsPlacement placement;
      const std::string why =
          read_placement(f, layout_->placements[p], layout_->wrong_is_count, placement);
      if (!why.empty()) {
        log_.unreadable.push_back({number, why});
        return;
      }
      (p == 0 ? row.out_of_place : row.in_place) = placement;
    }
    const auto key = std::make_tuple(row.size_bytes, row.type, row.redop, row.root);
    row.cycle = seen_[key]++;
    run_->rows.push_back(std::move(row));
  }

  [[nodiscard]] bool started_table() const { return run_ && (layout_ || !run_->rows.empty()); }

  NcclTestsRun& current(std::size_t number) {
    if (!run_) new_run(number);
    return *run_;
  }

  void new_run(std::size_t number) {
    finish_run();
    run_.emplace();
    run_->first_line = number;
    layout_.reset();
    layout_failed_ = false;
    seen_.clear();
  }

  // nccl-tests' footer is the mean busbw of every row it printed: a different mean of the rows
  // read here means rows were lost (a line cut or interleaved) or altered. The rows carry two
  // decimals and the footer six digits, so they agree to within rounding when all are there.
  void check_average(std::size_t number) {
    double sum = 0;
    std::size_t count = 0;
    for (const auto& row : run_->rows) {
      for (const auto& placement : {row.out_of_place, row.in_place}) {
        if (!placement) continue;
        sum += placement->busbw_gb_s;
        ++count;
      }
    }
    if (count == 0) return;
    const double mean = sum / static_cast<double>(count);
    const double average = *run_->avg_busbw_gb_s;
    if (std::abs(mean - average) > 0.01 + 1e-3 * std::abs(average)) {
      log_.unreadable.push_back(
          {number, fmt::format("the footer's average bus bandwidth {} is not the mean of the {} "
                               "measurement(s) read ({:.4g}): rows are missing or altered",
                               average, count, mean)});
    }
  }

  void finish_run() {
    if (run_) log_.runs.push_back(std::move(*run_));
    run_.reset();
  }

  NcclTestsLog log_;
  std::optional<NcclTestsRun> run_;
  std::optional<Layout> layout_;
  bool layout_failed_ = false;  // this test's column header was there but could not be read
  std::map<std::tuple<std::uint64_t, std::string, std::string, std::optional<int>>, int> seen_;
};

}  // namespace

std::string_view strip_launcher_prefix(std::string_view line) {
  // mpirun --tag-output: "[1,0]<stdout>:" (Open MPI) or "[0] " (older launchers).
  if (!line.empty() && line[0] == '[') {
    const auto close = line.find(']');
    if (close != std::string_view::npos && close > 1) {
      const std::string_view inside = line.substr(1, close - 1);
      const bool numeric = std::all_of(inside.begin(), inside.end(),
                                       [](char c) { return (c >= '0' && c <= '9') || c == ','; });
      if (numeric) {
        std::string_view rest = line.substr(close + 1);
        for (const std::string_view stream : {"<stdout>:", "<stderr>:"}) {
          if (rest.starts_with(stream)) rest.remove_prefix(stream.size());
        }
        return rest;
      }
    }
  }
  // srun -l: "0: " (the task number, perhaps padded, a colon and a space).
  std::size_t at = 0;
  while (at < line.size() && line[at] == ' ')
    ++at;
  const std::size_t first_digit = at;
  while (at < line.size() && line[at] >= '0' && line[at] <= '9')
    ++at;
  if (at > first_digit && at + 1 < line.size() && line[at] == ':' && line[at + 1] == ' ')
    return line.substr(at + 2);
  return line;
}

NcclTestsLog parse_nccl_tests_log(std::string_view text) {
  return Parser().parse(text);
}

}  // namespace commcert
