#include "core/units.hpp"

#include <cctype>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "core/errors.hpp"

namespace commcert {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Splits "1.5KiB" into 1.5 and "kib"; rejects empty numbers, signs and trailing garbage.
std::pair<double, std::string> split_number(std::string_view text, std::string_view what) {
  const auto bad = [&] { return UsageError(fmt::format("invalid {} '{}'", what, text)); };
  if (text.empty() || text.front() == '-' || text.front() == '+') throw bad();
  double value = 0.0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr == begin || !std::isfinite(value)) throw bad();
  return {value, lower(std::string_view(ptr, static_cast<std::size_t>(end - ptr)))};
}

}  // namespace

std::uint64_t parse_size(std::string_view text, std::string_view what) {
  const auto [value, suffix] = split_number(text, what);
  double multiplier = 1.0;
  std::string unit = suffix;
  // A trailing "B" or "iB" only follows a K/M/G/T prefix; "B" alone means bytes.
  if (unit.size() > 2 && unit.ends_with("ib"))
    unit.erase(unit.size() - 2);
  else if (unit.size() > 1 && unit.ends_with('b'))
    unit.pop_back();
  else if (unit == "b")
    unit.clear();
  if (unit.empty())
    multiplier = 1.0;
  else if (unit == "k")
    multiplier = 0x1p10;
  else if (unit == "m")
    multiplier = 0x1p20;
  else if (unit == "g")
    multiplier = 0x1p30;
  else if (unit == "t")
    multiplier = 0x1p40;
  else
    throw UsageError(
        fmt::format("invalid {} '{}': unknown suffix '{}' (use K, M, G or T)", what, text, suffix));
  const double bytes = std::floor(value * multiplier);
  if (bytes >= 0x1p63) throw UsageError(fmt::format("invalid {} '{}': too large", what, text));
  return static_cast<std::uint64_t>(bytes);
}

double parse_duration_seconds(std::string_view text, std::string_view what) {
  const auto [value, suffix] = split_number(text, what);
  double seconds = 0;
  if (suffix.empty() || suffix == "s") {
    seconds = value;
  } else if (suffix == "ms") {
    seconds = value / 1e3;
  } else if (suffix == "us") {
    seconds = value / 1e6;
  } else if (suffix == "m" || suffix == "min") {
    seconds = value * 60.0;
  } else if (suffix == "h") {
    seconds = value * 3600.0;
  } else {
    throw UsageError(
        fmt::format("invalid {} '{}': unknown unit '{}' (use ms, s, m or h)", what, text, suffix));
  }
  if (!(seconds <= kMaxDurationSeconds)) {  // also NaN and infinity
    throw UsageError(fmt::format("invalid {} '{}': longer than the limit of {}h (one year)", what,
                                 text, kMaxDurationSeconds / 3600));
  }
  return seconds;
}

std::string format_bytes(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  if (unit == 0) return fmt::format("{} B", bytes);
  return fmt::format("{:.4g} {}", value, kUnits[unit]);
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  if (seconds < 60.0) return fmt::format("{:.1f}s", seconds);
  const auto whole = static_cast<long long>(std::llround(seconds));
  if (whole < 3600) return fmt::format("{}m{:02}s", whole / 60, whole % 60);
  return fmt::format("{}h{:02}m", whole / 3600, (whole % 3600) / 60);
}

}  // namespace commcert
