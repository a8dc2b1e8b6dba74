#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace commcert {

// A library opened with dlopen and never closed: code and objects from it may live until exit
// (NCCL communicators, MPI's finalization), so unloading it early is never safe.
class SharedLibrary {
 public:
  // `name_or_path` is a bare soname (searched like the dynamic linker does) or a file path.
  // On failure returns nullopt and sets `error` to dlerror()'s text.
  static std::optional<SharedLibrary> open(const std::string& name_or_path, bool global,
                                           std::string& error);

  // The symbol's address, or nullptr if the library does not define it.
  [[nodiscard]] void* symbol(const char* name) const;
  // Where the dynamic linker found the file (absolute for a soname found on the search path).
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  SharedLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  void* handle_ = nullptr;
  std::string path_;
};

// The directory of the running executable (/proc/self/exe), empty if it cannot be read.
[[nodiscard]] std::string executable_directory();

// Path of an already loaded shared object whose file name starts with `prefix` (e.g.
// "libcuda.so"), found by walking the process's link map; nullopt when none is loaded.
[[nodiscard]] std::optional<std::string> loaded_object_path(const std::string& prefix);

}  // namespace commcert
