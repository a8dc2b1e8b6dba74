#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "records/run_meta.hpp"

namespace commcert {

class ProcessGroup;

// One library commcert uses, as this process found it: which copy, which version, or why none.
struct LibraryStatus {
  std::string name{};  // "nccl", "cublasLt", "mpi", "cuda_runtime", "cuda_driver"
  bool available = false;
  std::string version{};  // empty when unknown
  std::string path{};     // the file loaded; "static" for what is linked into the binary
  std::string origin{};   // where it was found ("NCCL_HOME", "system library path", ...)
  std::string detail{};   // why it is missing, or what else to know
};

// The libraries of this binary's GPU and MPI paths. `mpi_version` is the running MPI's own
// description when MPI has begun (meta.json); without it the MPI plugin is only opened.
[[nodiscard]] std::vector<LibraryStatus> runtime_libraries(
    const std::optional<std::string>& mpi_version = std::nullopt);

// "  nccl       2.28.9   /usr/lib/libnccl.so.2 (system library path)" per library.
[[nodiscard]] std::string format_library_lines(const std::vector<LibraryStatus>& libraries);
// meta.json's `libraries`: {name: {available, version, path, origin, detail}}.
[[nodiscard]] std::vector<std::pair<std::string, MetaLibrary>> meta_libraries(
    const std::vector<LibraryStatus>& libraries);

}  // namespace commcert
