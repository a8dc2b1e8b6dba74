#include "ingest/nccl_tests_log.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <regex>
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
    static const std::regex kFailure(R"((Test (NCCL|CUDA) failure|Test timeout|Test failure))");
    if (std::regex_search(text.begin(), text.end(), kFailure)) {
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
    static const std::regex kVersion(R"(^#\s*nccl-tests version (\S+))");
    static const std::regex kStarting(R"(^#\s*Collective test starting:\s*(\S+))");
    static const std::regex kConcluded(R"(^#\s*Collective test concluded)");
    static const std::regex kParameters(R"(^#\s*nThread\s+\d+)");
    static const std::regex kDevice(
        R"(^#\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)\s+\[([^\]]*)\]\s*(.*)$)");
    static const std::regex kOutOfBounds(R"(^#\s*Out of bounds values\s*:\s*(\d+))");
    static const std::regex kAverage(R"(^#\s*Avg bus bandwidth\s*:\s*(\S+))");
    static const std::regex kError(R"(^#\s*error:\s*(\S.*)$)");
    std::match_results<std::string_view::const_iterator> m;
    const auto search = [&](const std::regex& pattern) {
      return std::regex_search(text.begin(), text.end(), m, pattern);
    };
    if (search(kVersion)) {
      new_run(number);
      run_->version = m[1].str();
    } else if (search(kStarting)) {
      // The version line, when there is one, opened this test already.
      if (!run_ || !run_->program.empty() || started_table()) new_run(number);
      run_->program = m[1].str();
    } else if (search(kParameters)) {
      if (!run_ || run_->iterations || started_table()) new_run(number);
      read_parameters(text, number);
    } else if (search(kDevice)) {
      const auto rank = parse_count(m[1].str());
      const auto pid = parse_count(m[2].str());
      const auto index = parse_count(m[4].str());
      if (!rank || !pid || !index) {
        log_.unreadable.push_back(
            {number, "a device line whose rank, pid or device is out of range"});
        ++current(number).unreadable_devices;
        return;
      }
      NcclTestsDevice device;
      device.rank = *rank;
      device.pid = *pid;
      device.host = m[3].str();
      device.device = *index;
      device.pci_bus_id = m[5].str();
      device.name = std::string(trim(m[6].str()));
      device.line = number;
      current(number).devices.push_back(std::move(device));
    } else if (search(kOutOfBounds)) {
      const auto wrong = parse_integer(m[1].str());
      if (!wrong) {
        log_.unreadable.push_back({number, "the out-of-bounds count is out of range"});
      } else {
        current(number).out_of_bounds = *wrong;
      }
    } else if (search(kAverage)) {
      const auto value = parse_number(m[1].str());
      if (!value) {
        log_.unreadable.push_back({number, "the average bus bandwidth is not a number"});
      } else {
        current(number).avg_busbw_gb_s = *value;
        check_average(number);
      }
      current(number).concluded = true;
    } else if (search(kConcluded)) {
      current(number).concluded = true;
    } else if (search(kError)) {
      current(number).errors.push_back({number, std::string(text)});
    } else {
      auto names = split(text.substr(1));
      if (!names.empty() && names.front() == "#") names.erase(names.begin());
      if (looks_like_header(names)) header(names, number);
    }
  }

  void read_parameters(std::string_view text, std::size_t number) {
    static const std::regex kIters(R"((^|\s)iters:\s*(\d+))");
    static const std::regex kWarmup(R"(warmup iters:\s*(\d+))");
    static const std::regex kValidation(R"(validation:\s*(\d+))");
    std::match_results<std::string_view::const_iterator> m;
    const std::string copy(text);
    // "warmup iters:" also ends in "iters:"; the timed count is the one not after "warmup".
    std::string timed = std::regex_replace(copy, std::regex("warmup iters:"), "warmup_iters:");
    timed = std::regex_replace(timed, std::regex("agg iters:"), "agg_iters:");
    std::smatch sm;
    const auto count = [&](std::optional<int>& field, const std::string& digits, const char* what) {
      field = parse_count(digits);
      if (!field) log_.unreadable.push_back({number, fmt::format("{} is out of range", what)});
    };
    if (std::regex_search(timed, sm, kIters)) count(run_->iterations, sm[2].str(), "iters");
    if (std::regex_search(copy, sm, kWarmup)) {
      count(run_->warmup_iterations, sm[1].str(), "warmup iters");
    }
    if (std::regex_search(copy, sm, kValidation)) {
      count(run_->validation, sm[1].str(), "validation");
    }
    (void)m;
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
