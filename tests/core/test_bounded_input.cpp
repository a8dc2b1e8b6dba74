#include <fstream>
#include <string>
#include <sys/stat.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/bounded_input.hpp"
#include "core/errors.hpp"
#include "core/printable.hpp"
#include "temp_directory.hpp"

namespace commcert {
namespace {

using ::testing::HasSubstr;

std::string error_of(const std::filesystem::path& path, std::uint64_t limit) {
  try {
    (void)read_bounded_file(path, limit, "baseline");
  } catch (const UsageError& error) {
    return error.what();
  }
  return "(accepted)";
}

void write(const std::filesystem::path& path, std::size_t bytes) {
  std::ofstream(path, std::ios::binary) << std::string(bytes, 'x');
}

TEST(BoundedInput, AFileAtItsLimitIsReadOneByteMoreIsRefusedNamingTheLimit) {
  test_support::TempDirectory dir;
  const auto path = dir.path() / "b.yaml";
  write(path, 1023);
  EXPECT_EQ(read_bounded_file(path, 1024, "baseline").size(), 1023u);
  write(path, 1024);
  EXPECT_EQ(read_bounded_file(path, 1024, "baseline").size(), 1024u);
  write(path, 1025);
  const std::string error = error_of(path, 1024);
  EXPECT_THAT(error, HasSubstr(path.string()));
  EXPECT_THAT(error, HasSubstr("larger than 1 KiB, the most a baseline file may hold"));
}

// /dev/zero has no size and no end: it was read until memory ran out.
TEST(BoundedInput, ADeviceWithoutEndIsRefusedAtTheLimit) {
  EXPECT_THAT(error_of("/dev/zero", kMaxYamlFileBytes), HasSubstr("larger than 4 MiB"));
}

// Opening a FIFO for reading used to wait for a writer forever.
TEST(BoundedInput, AFifoWithoutWriterReadsAsEmptyInsteadOfHanging) {
  test_support::TempDirectory dir;
  const auto path = dir.path() / "fifo";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  EXPECT_EQ(read_bounded_file(path, 1024, "suite"), "");
}

TEST(BoundedInput, MissingFilesAndDirectoriesAreUsageErrors) {
  test_support::TempDirectory dir;
  EXPECT_THAT(error_of(dir.path() / "absent", 1024), HasSubstr("cannot open baseline"));
  EXPECT_THAT(error_of(dir.path(), 1024), HasSubstr("it is a directory"));
}

TEST(Printable, EscapesControlCharactersAndKeepsEverythingElse) {
  EXPECT_EQ(printable("node-01.rack_2"), "node-01.rack_2");
  EXPECT_EQ(printable("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(printable(std::string("e\x1b[2J\x7f\x01", 7)), "e\\x1b[2J\\x7f\\x01");
  EXPECT_EQ(printable(std::string("\0", 1)), "\\x00");
  EXPECT_EQ(printable("back\\slash, ümlaut"), "back\\slash, ümlaut");  // not control characters
}

}  // namespace
}  // namespace commcert
