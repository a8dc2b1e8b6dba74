#include "comm/host_buffers.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <new>
#include <string>

#include <fmt/format.h>

#include "comm/host_iteration.hpp"
#include "core/errors.hpp"
#include "core/units.hpp"

namespace commcert {

void HostBuffer::reserve(std::uint64_t bytes) {
  if (bytes <= capacity_) return;
  constexpr std::uint64_t kAlignment = 4096;
  const std::uint64_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void* pointer = std::aligned_alloc(kAlignment, rounded);
  if (!pointer) {
    throw RuntimeFailure(fmt::format("cannot allocate {} of host memory", format_bytes(rounded)));
  }
  // Touch every page now so first-touch page faults never land inside a timed operation.
  std::memset(pointer, 0, rounded);
  data_.reset(pointer);
  capacity_ = rounded;
}

std::uint64_t host_memory_share(int processes_on_host) {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") {
      const double usable = 0.8 * static_cast<double>(kib) * 1024.0;
      return static_cast<std::uint64_t>(usable / (processes_on_host > 0 ? processes_on_host : 1));
    }
  }
  return std::uint64_t{1} << 30;  // unknown: assume a modest 1 GiB per process
}

std::uint64_t touch_for_read(const void* data, std::uint64_t bytes) {
  constexpr std::uint64_t kLine = 64;
  const auto* base = static_cast<const unsigned char*>(data);
  std::uint64_t folded = 0;
  for (std::uint64_t at = 0; at < bytes; at += kLine) {
    std::uint64_t word = 0;
    std::memcpy(&word, base + at, std::min<std::uint64_t>(sizeof word, bytes - at));
    folded ^= word;
  }
  return folded;
}

}  // namespace commcert
