#pragma once

#include <cstddef>
#include <vector>

namespace commcert {

// Open-addressing tables keyed by a 64-bit hash that is never 0 (0 marks a free slot), probed
// linearly from `hash & (size - 1)`; their size is a power of two.

// Whether one more entry would fill `slots` beyond three quarters: past that, probes grow long.
template <typename Slot>
[[nodiscard]] bool hash_slots_need_growth(const std::vector<Slot>& slots, std::size_t used) {
  return 4 * (used + 1) > 3 * slots.size();
}

// Doubles `slots` and puts every entry again where its hash now leads.
template <typename Slot>
void grow_hash_slots(std::vector<Slot>& slots) {
  std::vector<Slot> old(slots.size() * 2);
  old.swap(slots);
  const std::size_t mask = slots.size() - 1;
  for (const Slot& slot : old) {
    if (slot.hash == 0) continue;
    std::size_t i = slot.hash & mask;
    while (slots[i].hash != 0)
      i = (i + 1) & mask;
    slots[i] = slot;
  }
}

}  // namespace commcert
