#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace commcert {

// "32M", "1.5K", "8", "4GiB": binary suffixes K/M/G/T as nccl-tests reads them, an optional
// trailing "B" or "iB", decimals allowed. Throws UsageError naming `what` on bad input.
[[nodiscard]] std::uint64_t parse_size(std::string_view text, std::string_view what = "size");

// The longest duration any flag or suite field takes: one year. Deadlines are kept in
// nanoseconds (a signed 64-bit count lasts 292 years); anything longer is a typo, not a plan.
inline constexpr double kMaxDurationSeconds = 365.0 * 24 * 3600;

// "90", "90s", "1.5m", "10m", "2h", "500ms" -> seconds, from 0 to kMaxDurationSeconds. Throws
// UsageError naming `what` (negative, NaN, infinite, too long, unknown unit).
[[nodiscard]] double parse_duration_seconds(std::string_view text,
                                            std::string_view what = "duration");

// 8 -> "8 B", 1048576 -> "1 MiB", 1536 -> "1.5 KiB".
[[nodiscard]] std::string format_bytes(std::uint64_t bytes);

// 3.2 -> "3.2s", 75 -> "1m15s", 3700 -> "1h01m".
[[nodiscard]] std::string format_duration(double seconds);

}  // namespace commcert
