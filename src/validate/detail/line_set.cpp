#include "validate/detail/line_set.hpp"

#include <cstring>

#include "core/hash_slots.hpp"

namespace commcert::detail {
namespace {

// wyhash (final version 4, public domain, github.com/wangyi-fudan/wyhash): three independent
// 64x64->128-bit multiplies per 48 bytes, so the CPU overlaps them; ten times the speed of a
// multiply chain per 8 bytes on kilobyte lines, and each line of a 14 GB fleet is hashed once.
__extension__ using Wide = unsigned __int128;  // GCC and Clang: a 128-bit product

using Secret = std::uint64_t[4];

// wyhash's own secret, and a second one made the same way (odd, four bits set in every byte) for
// the fingerprint's check hash: a word that blinds one hash (equal to its secret, so that its
// product is 0 whatever the next word holds) is still seen by the other.
constexpr Secret kPrimarySecret = {0xa0761d6478bd642full, 0xe7037ed1a0b428dbull,
                                   0x8ebc6af09c88c6e3ull, 0x589965cc75374cc3ull};
constexpr Secret kCheckSecret = {0x2d358dccaa6c78a5ull, 0x8bb84b93962eacc9ull,
                                 0x4b33a62ed433d4a3ull, 0x4d5a2da51de1aa47ull};

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  const Wide product = static_cast<Wide>(a) * b;
  return static_cast<std::uint64_t>(product) ^ static_cast<std::uint64_t>(product >> 64);
}

std::uint64_t read8(const char* p) {
  std::uint64_t word;
  std::memcpy(&word, p, 8);
  return word;
}

std::uint64_t read4(const char* p) {
  std::uint32_t word;
  std::memcpy(&word, p, 4);
  return word;
}

std::uint64_t wyhash(std::string_view line, const Secret& secret) {
  const char* p = line.data();
  std::size_t left = line.size();
  std::uint64_t seed = mix(secret[0], secret[1]);
  std::uint64_t a = 0;
  std::uint64_t b = 0;
  if (left <= 16) {
    if (left >= 4) {
      a = (read4(p) << 32) | read4(p + ((left >> 3) << 2));
      b = (read4(p + left - 4) << 32) | read4(p + left - 4 - ((left >> 3) << 2));
    } else if (left > 0) {
      a = (std::uint64_t{static_cast<unsigned char>(p[0])} << 16) |
          (std::uint64_t{static_cast<unsigned char>(p[left >> 1])} << 8) |
          static_cast<unsigned char>(p[left - 1]);
    }
  } else {
    if (left > 48) {
      std::uint64_t lane1 = seed;
      std::uint64_t lane2 = seed;
      do {
        seed = mix(read8(p) ^ secret[1], read8(p + 8) ^ seed);
        lane1 = mix(read8(p + 16) ^ secret[2], read8(p + 24) ^ lane1);
        lane2 = mix(read8(p + 32) ^ secret[3], read8(p + 40) ^ lane2);
        p += 48;
        left -= 48;
      } while (left > 48);
      seed ^= lane1 ^ lane2;
    }
    while (left > 16) {
      seed = mix(read8(p) ^ secret[1], read8(p + 8) ^ seed);
      p += 16;
      left -= 16;
    }
    a = read8(p + left - 16);
    b = read8(p + left - 8);
  }
  const Wide product = static_cast<Wide>(a ^ secret[1]) * (b ^ seed);
  const auto low = static_cast<std::uint64_t>(product);
  const auto high = static_cast<std::uint64_t>(product >> 64);
  const std::uint64_t h = mix(low ^ secret[0] ^ line.size(), high ^ secret[1]);
  return h == 0 ? 1 : h;
}

}  // namespace

LineFingerprint LineSet::fingerprint(std::string_view line) {
  return {wyhash(line, kPrimarySecret), wyhash(line, kCheckSecret)};
}

std::optional<EvidenceRef> LineSet::insert_fingerprinted(const LineFingerprint& line,
                                                         EvidenceRef ref) {
  if (hash_slots_need_growth(slots_, used_)) grow_hash_slots(slots_);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = line.primary & mask;; i = (i + 1) & mask) {
    Slot& slot = slots_[i];
    if (slot.hash == line.primary && slot.check == line.check) return slot.ref;
    if (slot.hash == 0) {
      slot = {line.primary, line.check, ref};
      ++used_;
      return std::nullopt;
    }
  }
}

}  // namespace commcert::detail
