#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "validate/evidence.hpp"

namespace commcert::detail {

// Every line read so far, as a 64-bit hash, to find exact repeats (a records file copied into
// two results directories). An open-addressing table of 16-byte slots, at most three quarters
// full: ten million lines cost 256 MiB and no allocation per line. Two different lines sharing a
// hash would be counted as a duplicate; at ten million lines that is about as likely as a
// cosmic-ray bit flip.
class LineSet {
 public:
  // Returns where the same line was seen first, or nullopt (and remembers `ref`).
  std::optional<EvidenceRef> insert(std::string_view line, EvidenceRef ref) {
    return insert_hashed(hash(line), ref);
  }
  // The same for a line whose hash() is known: a reader hashes a chunk's lines first and
  // prefetch()es each slot a few lines ahead, so the table's cache misses overlap.
  std::optional<EvidenceRef> insert_hashed(std::uint64_t line_hash, EvidenceRef ref);
  void prefetch(std::uint64_t line_hash) const {
    __builtin_prefetch(&slots_[line_hash & (slots_.size() - 1)]);
  }

  [[nodiscard]] static std::uint64_t hash(std::string_view line);

 private:
  struct Slot {
    std::uint64_t hash = 0;  // 0: empty
    EvidenceRef ref;
  };

  std::vector<Slot> slots_ = std::vector<Slot>(1024);
  std::size_t used_ = 0;
};

}  // namespace commcert::detail
