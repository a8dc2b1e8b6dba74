#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace commcert {

// How much of each kind of input file commcert reads. An input larger than its limit is refused
// with the limit named (exit 2) before it is read in full: a path such as /dev/zero, a FIFO or a
// file copied by mistake must neither hang the command nor fill its memory.
//
// Suites and baselines are hand-written YAML of a few KiB (the largest shipped one is 6 KiB, a
// suite at its stage limit about 200 KiB); 4 MiB is a thousand times that.
inline constexpr std::uint64_t kMaxYamlFileBytes = std::uint64_t{4} << 20;
// meta.json and suite.json of a run: versions, a whitelisted environment, stage results; tens of
// KiB at most.
inline constexpr std::uint64_t kMaxRunMetaBytes = std::uint64_t{16} << 20;
// One records.jsonl: a 4,096-node fleet with a full suite writes 1.4 GiB in all, 1.1 GiB of it in
// one run's file (docs/performance.md); 16 GiB is ten times the largest fleets run today, and
// about a minute of `certify`.
inline constexpr std::uint64_t kMaxRecordsFileBytes = std::uint64_t{16} << 30;
// One record line: a cluster-scope collective record carries every rank's time, 12 to 20 bytes a
// rank; 64 MiB is room for over three million ranks (tests/validate/test_record_reader.cpp reads
// one of 3,000,000), and the reader's chunks, which grow to twice the longest line, stay bounded.
inline constexpr std::uint64_t kMaxRecordLineBytes = std::uint64_t{64} << 20;

// Opens `path` for reading without blocking on a FIFO that has no writer (it reads as empty),
// then switches the descriptor back to blocking reads. Throws UsageError naming `what`.
[[nodiscard]] int open_input(const std::filesystem::path& path, std::string_view what);

// The whole of a small input file, at most `limit` bytes; a larger file (found by its size, or
// by reading one byte past the limit from a device or pipe) is a UsageError naming the file,
// `what` and the limit.
[[nodiscard]] std::string read_bounded_file(const std::filesystem::path& path, std::uint64_t limit,
                                            std::string_view what);

}  // namespace commcert
