#include "kernels/pattern_host.hpp"

#include <cstring>

namespace commcert {
namespace {

template <typename Word>
void poison_words(const void* expected, void* output, std::uint64_t elements) {
  const auto* in = static_cast<const Word*>(expected);
  auto* out = static_cast<Word*>(output);
  for (std::uint64_t i = 0; i < elements; ++i)
    out[i] = static_cast<Word>(~in[i]);
}

template <typename Word>
std::uint64_t count_unequal_words(const void* output, const void* expected,
                                  std::uint64_t elements) {
  const auto* got = static_cast<const Word*>(output);
  const auto* want = static_cast<const Word*>(expected);
  std::uint64_t wrong = 0;
  for (std::uint64_t i = 0; i < elements; ++i)
    wrong += got[i] != want[i] ? 1 : 0;
  return wrong;
}

}  // namespace

void fill_input_host(const PatternSpec& spec, int rank, void* input, std::uint64_t elements,
                     std::uint64_t first) {
  const int bytes = element_size(spec.type);
  for (std::uint64_t i = 0; i < elements; ++i) {
    store_element(input, i, bytes, input_bits(spec, rank, first + i));
  }
}

void fill_expected_host(const PatternSpec& spec, int rank, void* expected, std::uint64_t elements) {
  const int bytes = element_size(spec.type);
  for (std::uint64_t i = 0; i < elements; ++i) {
    store_element(expected, i, bytes, expected_bits(spec, rank, i));
  }
}

void poison_host(const PatternSpec& spec, const void* expected, void* output,
                 std::uint64_t elements) {
  switch (element_size(spec.type)) {
    case 1:
      poison_words<std::uint8_t>(expected, output, elements);
      break;
    case 2:
      poison_words<std::uint16_t>(expected, output, elements);
      break;
    case 4:
      poison_words<std::uint32_t>(expected, output, elements);
      break;
    default:
      poison_words<std::uint64_t>(expected, output, elements);
      break;
  }
}

std::uint64_t count_mismatches_host(const PatternSpec& spec, const void* output,
                                    const void* expected, std::uint64_t elements) {
  const bool tolerant =
      spec.op == ReduceOp::kAvg && is_reduction(spec.collective) && is_floating(spec.type);
  const int bytes = element_size(spec.type);
  if (tolerant) {
    std::uint64_t wrong = 0;
    for (std::uint64_t i = 0; i < elements; ++i) {
      wrong +=
          element_matches(spec, load_element(output, i, bytes), load_element(expected, i, bytes))
              ? 0
              : 1;
    }
    return wrong;
  }
  // The common case: bit-exact comparison at memory speed.
  if (std::memcmp(output, expected, elements * static_cast<std::uint64_t>(bytes)) == 0) return 0;
  switch (bytes) {
    case 1:
      return count_unequal_words<std::uint8_t>(output, expected, elements);
    case 2:
      return count_unequal_words<std::uint16_t>(output, expected, elements);
    case 4:
      return count_unequal_words<std::uint32_t>(output, expected, elements);
    default:
      return count_unequal_words<std::uint64_t>(output, expected, elements);
  }
}

void corrupt_host(const PatternSpec& spec, void* output, std::uint64_t elements) {
  const int bytes = element_size(spec.type);
  for (std::uint64_t i = 0; i < elements; i += kCorruptionStride) {
    store_element(output, i, bytes, corrupted_bits(load_element(output, i, bytes), spec.type));
  }
}

}  // namespace commcert
