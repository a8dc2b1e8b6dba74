#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/library_search.hpp"
#include "runtime/shared_library.hpp"

namespace commcert {

// A library found and loaded at run time, or why it could not be.
struct RuntimeLibrary {
  std::string name;                      // "nccl"
  std::string soname;                    // "libnccl.so.2"
  std::optional<SharedLibrary> library;  // set when loaded
  std::string origin;                    // where it was found: "NCCL_HOME", "system library path"
  std::string version;                   // "2.28.9"; empty when the library cannot tell
  std::string error;                     // why it is not loaded: every place tried

  [[nodiscard]] bool loaded() const { return library.has_value(); }
  [[nodiscard]] const std::string& path() const;
};

using VersionReader = std::function<std::string(const SharedLibrary&)>;

// Tries the candidates of `spec` in order and keeps the first that loads. A soname the system
// search does not find is not an error of its own; a file that exists and fails to load is
// (wrong architecture, a missing dependency), and the search goes on past it.
[[nodiscard]] RuntimeLibrary load_runtime_library(
    const LibrarySpec& spec, const EnvironmentLookup& environment,
    const VersionReader& read_version, const std::string& cuda_default = "/usr/local/cuda");

// "2.28.9" from ncclGetVersion's 22809 (and 2.18's 21803; before 2.9 the code was 2xyz).
[[nodiscard]] std::string nccl_version_text(int code);
// "13.1.0" from cublasLtGetVersion's 130100.
[[nodiscard]] std::string cublas_version_text(std::size_t code);

// The two GPU libraries commcert calls, loaded on first use from the process environment and
// kept for the life of the process (thread-safe).
[[nodiscard]] const RuntimeLibrary& nccl_runtime();
[[nodiscard]] const RuntimeLibrary& cublaslt_runtime();

[[nodiscard]] LibrarySpec nccl_library_spec();
// `cuda_major` picks the soname: cuBLASLt's ABI changes with the CUDA major version.
[[nodiscard]] LibrarySpec cublaslt_library_spec(int cuda_major);

}  // namespace commcert
