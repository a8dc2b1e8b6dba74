#include "validate/detail/line_set.hpp"

#include <cstring>

namespace commcert::detail {
namespace {

constexpr std::uint64_t kMultiplier = 0x9E3779B97F4A7C15ull;

std::uint64_t mix(std::uint64_t h) {  // MurmurHash3's finalizer
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

}  // namespace

std::uint64_t LineSet::hash(std::string_view line) {
  // Eight bytes per step: several times faster than std::hash on kilobyte lines.
  std::uint64_t h = line.size() * kMultiplier;
  std::size_t i = 0;
  for (; i + 8 <= line.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, line.data() + i, 8);
    h = (h ^ mix(word)) * kMultiplier;
  }
  std::uint64_t tail = 0;
  std::memcpy(&tail, line.data() + i, line.size() - i);
  h = (h ^ mix(tail)) * kMultiplier;
  h = mix(h);
  return h == 0 ? 1 : h;
}

std::optional<EvidenceRef> LineSet::insert(std::string_view line, EvidenceRef ref) {
  if (2 * (used_ + 1) > slots_.size()) grow();
  const std::uint64_t h = hash(line);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = h & mask;; i = (i + 1) & mask) {
    Slot& slot = slots_[i];
    if (slot.hash == h) return slot.ref;
    if (slot.hash == 0) {
      slot = {h, ref};
      ++used_;
      return std::nullopt;
    }
  }
}

void LineSet::grow() {
  std::vector<Slot> old(slots_.size() * 2);
  old.swap(slots_);
  const std::size_t mask = slots_.size() - 1;
  for (const Slot& slot : old) {
    if (slot.hash == 0) continue;
    std::size_t i = slot.hash & mask;
    while (slots_[i].hash != 0)
      i = (i + 1) & mask;
    slots_[i] = slot;
  }
}

}  // namespace commcert::detail
