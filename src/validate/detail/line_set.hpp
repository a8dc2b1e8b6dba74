#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "validate/evidence.hpp"

namespace commcert::detail {

// Two independent 64-bit hashes of one line. A repeat needs both to match: a line that only
// shares `primary` with an earlier one is a different line and is kept, so a hash collision can
// never drop a record (the only fault record of a node, say) as a copy of another. Both would
// have to collide: about n^2 / 2^129 for n lines, 1e-25 at ten million.
struct LineFingerprint {
  std::uint64_t primary = 0;  // never 0; picks the slot
  std::uint64_t check = 0;

  friend bool operator==(const LineFingerprint&, const LineFingerprint&) = default;
};

// Every line read so far, as its fingerprint, to find exact repeats (a records file copied into
// two results directories). An open-addressing table of 24-byte slots, at most three quarters
// full: ten million lines cost 384 MiB and no allocation per line.
class LineSet {
 public:
  // Returns where the same line was seen first, or nullopt (and remembers `ref`).
  std::optional<EvidenceRef> insert(std::string_view line, EvidenceRef ref) {
    return insert_fingerprinted(fingerprint(line), ref);
  }
  // The same for a line whose fingerprint() is known: a reader fingerprints a chunk's lines first
  // and prefetch()es each slot a few lines ahead, so the table's cache misses overlap.
  std::optional<EvidenceRef> insert_fingerprinted(const LineFingerprint& line, EvidenceRef ref);
  void prefetch(const LineFingerprint& line) const {
    __builtin_prefetch(&slots_[line.primary & (slots_.size() - 1)]);
  }

  [[nodiscard]] static LineFingerprint fingerprint(std::string_view line);

 private:
  struct Slot {
    std::uint64_t hash = 0;  // the fingerprint's primary; 0: empty
    std::uint64_t check = 0;
    EvidenceRef ref;
  };

  std::vector<Slot> slots_ = std::vector<Slot>(1024);
  std::size_t used_ = 0;
};

}  // namespace commcert::detail
