#include <cmath>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "core/units.hpp"

namespace commcert {
namespace {

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = kKiB * 1024;
constexpr std::uint64_t kGiB = kMiB * 1024;
constexpr std::uint64_t kTiB = kGiB * 1024;

TEST(ParseSize, ReadsBinarySuffixesLikeNcclTests) {
  EXPECT_EQ(parse_size("8"), 8u);
  EXPECT_EQ(parse_size("1K"), 1024u);
  EXPECT_EQ(parse_size("32M"), 32u << 20);
  EXPECT_EQ(parse_size("2g"), 2ull << 30);
  EXPECT_EQ(parse_size("1.5K"), 1536u);
  EXPECT_EQ(parse_size("4MiB"), 4u << 20);
  EXPECT_EQ(parse_size("64KB"), 64u << 10);
}

TEST(ParseSize, EverySuffixIsAPowerOf1024InAnyCase) {
  const struct {
    const char* suffix;
    std::uint64_t multiplier;
  } cases[] = {{"", 1},       {"B", 1},      {"b", 1},    {"K", kKiB},  {"k", kKiB},   {"KB", kKiB},
               {"KiB", kKiB}, {"kib", kKiB}, {"M", kMiB}, {"MB", kMiB}, {"MiB", kMiB}, {"G", kGiB},
               {"GiB", kGiB}, {"gb", kGiB},  {"T", kTiB}, {"TB", kTiB}, {"TiB", kTiB}, {"t", kTiB}};
  for (const auto& c : cases) {
    EXPECT_EQ(parse_size(std::string("3") + c.suffix), 3 * c.multiplier) << c.suffix;
  }
}

TEST(ParseSize, DecimalsAreScaledThenTruncatedToWholeBytes) {
  EXPECT_EQ(parse_size("0.5K"), 512u);
  EXPECT_EQ(parse_size("2.25M"), 2 * kMiB + kMiB / 4);
  EXPECT_EQ(parse_size("0.5"), 0u);  // half a byte is no byte, as nccl-tests' (size_t) cast
  EXPECT_EQ(parse_size("1.9"), 1u);
  EXPECT_EQ(parse_size("0"), 0u);
  EXPECT_EQ(parse_size("0.001K"), 1u);  // 1.024 bytes
}

TEST(ParseSize, LargestSizesStayExact) {
  EXPECT_EQ(parse_size("8G"), 8 * kGiB);
  EXPECT_EQ(parse_size("8388607T"), 8388607 * kTiB);       // just below 2^63
  EXPECT_THROW((void)parse_size("8388608T"), UsageError);  // 2^63
  EXPECT_THROW((void)parse_size("1e30"), UsageError);
}

TEST(ParseSize, RejectsWhatItCannotRead) {
  for (const char* bad : {"", "-1", "+5", "abc", "12Q", "1.2.3M", "nan", "1e400", "inf", " 8", "8 ",
                          "K", "MiB", "1KK", "1Kb2", "0x10", "1 K"}) {
    EXPECT_THROW((void)parse_size(bad, "-b"), UsageError) << bad;
  }
}

TEST(ParseSize, RejectsASuffixThatIsNotAUnit) {
  // "iB" and "BB" name no unit: they must not be read as bytes.
  for (const char* bad : {"8iB", "8ib", "8BB", "8bb", "8Bi", "8KiBB"}) {
    EXPECT_THROW((void)parse_size(bad, "-b"), UsageError) << bad;
  }
}

TEST(ParseSize, ErrorNamesTheFlagAndTheText) {
  try {
    (void)parse_size("12Q", "-e/--maxbytes");
    FAIL() << "no exception";
  } catch (const UsageError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("-e/--maxbytes"), std::string::npos) << message;
    EXPECT_NE(message.find("12Q"), std::string::npos) << message;
  }
}

TEST(ParseDuration, ReadsEveryUnit) {
  EXPECT_DOUBLE_EQ(parse_duration_seconds("90"), 90.0);
  EXPECT_DOUBLE_EQ(parse_duration_seconds("90s"), 90.0);
  EXPECT_DOUBLE_EQ(parse_duration_seconds("1.5m"), 90.0);
  EXPECT_DOUBLE_EQ(parse_duration_seconds("10m"), 600.0);
  EXPECT_DOUBLE_EQ(parse_duration_seconds("2min"), 120.0);
  EXPECT_DOUBLE_EQ(parse_duration_seconds("2h"), 7200.0);
  EXPECT_DOUBLE_EQ(parse_duration_seconds("500ms"), 0.5);
  EXPECT_DOUBLE_EQ(parse_duration_seconds("250us"), 250e-6);
  EXPECT_DOUBLE_EQ(parse_duration_seconds("0"), 0.0);
  EXPECT_DOUBLE_EQ(parse_duration_seconds("3S"), 3.0);  // units are case-insensitive
  EXPECT_DOUBLE_EQ(parse_duration_seconds("1H"), 3600.0);
}

TEST(ParseDuration, RejectsWhatItCannotRead) {
  for (const char* bad : {"", "-5", "+5", "s", "5x", "5 s", "5d", "1.2.3s", "nan", "inf", "ten"}) {
    EXPECT_THROW((void)parse_duration_seconds(bad, "-T"), UsageError) << bad;
  }
}

TEST(ParseDuration, LongerThanAYearIsRefusedNotOverflowed) {
  // The limit, one second either side, and the 2600000h (issue 10, item 10), whose
  // nanoseconds overflow a 64-bit count.
  EXPECT_DOUBLE_EQ(parse_duration_seconds("31535999"), 31535999.0);
  EXPECT_DOUBLE_EQ(parse_duration_seconds("31536000"), kMaxDurationSeconds);
  EXPECT_DOUBLE_EQ(parse_duration_seconds("8760h"), kMaxDurationSeconds);
  for (const char* bad : {"31536001", "31536001s", "525601m", "2600000h", "1e300h", "1e400"}) {
    try {
      (void)parse_duration_seconds(bad, "budget");
      ADD_FAILURE() << "accepted " << bad;
    } catch (const UsageError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find(std::string("budget '") + bad + "'"), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
  }
}

TEST(ParseDuration, ErrorNamesTheFlag) {
  try {
    (void)parse_duration_seconds("5d", "-T/--timeout");
    FAIL() << "no exception";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("-T/--timeout"), std::string::npos) << error.what();
  }
}

TEST(FormatBytes, UsesTheLargestBinaryUnitBelowTheValue) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(8), "8 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1024), "1 KiB");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(kMiB), "1 MiB");
  EXPECT_EQ(format_bytes(64 * kMiB), "64 MiB");
  EXPECT_EQ(format_bytes(kGiB + kGiB / 4), "1.25 GiB");
  EXPECT_EQ(format_bytes(8 * kGiB), "8 GiB");
  EXPECT_EQ(format_bytes(3 * kTiB), "3 TiB");
  EXPECT_EQ(format_bytes(2048 * kTiB), "2048 TiB");  // no unit above TiB
}

TEST(FormatBytes, KeepsFourSignificantDigits) {
  EXPECT_EQ(format_bytes(100 * kMiB + kMiB / 2), "100.5 MiB");
  EXPECT_EQ(format_bytes(kKiB + 1), "1.001 KiB");
}

TEST(FormatDuration, SecondsThenMinutesThenHours) {
  EXPECT_EQ(format_duration(0), "0.0s");
  EXPECT_EQ(format_duration(3.2), "3.2s");
  EXPECT_EQ(format_duration(59.4), "59.4s");
  EXPECT_EQ(format_duration(60), "1m00s");
  EXPECT_EQ(format_duration(75), "1m15s");
  EXPECT_EQ(format_duration(3599), "59m59s");
  EXPECT_EQ(format_duration(3600), "1h00m");
  EXPECT_EQ(format_duration(3700), "1h01m");
  EXPECT_EQ(format_duration(90000), "25h00m");
}

TEST(FormatDuration, UnknownForNegativeOrNonFinite) {
  EXPECT_EQ(format_duration(-1), "?");
  EXPECT_EQ(format_duration(std::nan("")), "?");
  EXPECT_EQ(format_duration(HUGE_VAL), "?");
}

}  // namespace
}  // namespace commcert
