#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>

namespace commcert {

// A page-aligned host allocation that only grows, so one sweep allocates each buffer once.
class HostBuffer {
 public:
  void reserve(std::uint64_t bytes);
  [[nodiscard]] void* data() { return data_.get(); }
  [[nodiscard]] const void* data() const { return data_.get(); }
  [[nodiscard]] unsigned char* bytes() { return static_cast<unsigned char*>(data_.get()); }
  [[nodiscard]] std::uint64_t capacity() const { return capacity_; }

 private:
  struct Free {
    void operator()(void* pointer) const { std::free(pointer); }
  };
  std::unique_ptr<void, Free> data_;
  std::uint64_t capacity_ = 0;
};

// Bytes of memory this host can still give to `processes_on_host` processes, from
// /proc/meminfo MemAvailable (80 % of it, shared equally).
[[nodiscard]] std::uint64_t host_memory_share(int processes_on_host);

}  // namespace commcert
