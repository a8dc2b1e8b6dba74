#pragma once

#include <utility>

namespace commcert {

// Sole owner of one handle of a C API (a CUDA stream, an NCCL communicator, device memory):
// closes it when destroyed, moves but never copies. `Traits` names the handle type, its empty
// value and how to close one:
//
//   struct Traits {
//     using Handle = ...;
//     static constexpr Handle kEmpty = ...;
//     static void close(Handle handle) noexcept;
//   };
//
// Owning every handle this way is what lets a throw half-way through building a communicator
// (or splitting one) release what was already made.
template <typename Traits>
class UniqueHandle {
 public:
  using Handle = typename Traits::Handle;

  UniqueHandle() = default;
  explicit UniqueHandle(Handle handle) : handle_(handle) {}
  ~UniqueHandle() { reset(); }
  UniqueHandle(UniqueHandle&& other) noexcept
      : handle_(std::exchange(other.handle_, Traits::kEmpty)) {}
  UniqueHandle& operator=(UniqueHandle&& other) noexcept {
    if (this != &other) reset(std::exchange(other.handle_, Traits::kEmpty));
    return *this;
  }
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;

  [[nodiscard]] Handle get() const { return handle_; }
  [[nodiscard]] explicit operator bool() const { return handle_ != Traits::kEmpty; }

  // Closes the handle held (if any) and takes `handle` instead.
  void reset(Handle handle = Traits::kEmpty) noexcept {
    const Handle old = std::exchange(handle_, handle);
    if (old != Traits::kEmpty) Traits::close(old);
  }
  // Gives the handle up without closing it (e.g. to close it another way, as ncclCommAbort).
  [[nodiscard]] Handle release() noexcept { return std::exchange(handle_, Traits::kEmpty); }
  // Where a C API that creates through a pointer writes the new handle; whatever was held is
  // closed first. The address stays valid while this object does not move.
  [[nodiscard]] Handle* out() noexcept {
    reset();
    return &handle_;
  }

 private:
  Handle handle_ = Traits::kEmpty;
};

}  // namespace commcert
