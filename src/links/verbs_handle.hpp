#pragma once

#include <utility>

namespace commcert {

// Sole owner of one libibverbs object (device context, protection domain, completion queue, queue
// pair, memory registration, device list): closes it when destroyed, moves but never copies.
// libibverbs is loaded at run time (links/verbs_library.hpp), so the function that closes an
// object is an entry point of the loaded library: `Close` names that member (for example
// &VerbsLibrary::dealloc_pd) and each handle keeps the library it came from. Owning every object
// this way is what lets a throw part way through opening a device release what was already made.
template <typename Library, typename Object, auto Close>
class VerbsHandle {
 public:
  VerbsHandle() = default;
  // Takes `object` (nullptr: holds nothing), to be closed through `library`.
  VerbsHandle(const Library& library, Object* object) : library_(&library), object_(object) {}
  ~VerbsHandle() { reset(); }
  VerbsHandle(VerbsHandle&& other) noexcept
      : library_(other.library_), object_(std::exchange(other.object_, nullptr)) {}
  VerbsHandle& operator=(VerbsHandle&& other) noexcept {
    if (this != &other) {
      reset();
      library_ = other.library_;
      object_ = std::exchange(other.object_, nullptr);
    }
    return *this;
  }
  VerbsHandle(const VerbsHandle&) = delete;
  VerbsHandle& operator=(const VerbsHandle&) = delete;

  [[nodiscard]] Object* get() const { return object_; }
  [[nodiscard]] Object* operator->() const { return object_; }
  [[nodiscard]] explicit operator bool() const { return object_ != nullptr; }

  // Closes the object held, if any; the handle is then empty.
  void reset() noexcept {
    if (Object* const old = std::exchange(object_, nullptr)) (library_->*Close)(old);
  }

 private:
  const Library* library_ = nullptr;
  Object* object_ = nullptr;
};

}  // namespace commcert
