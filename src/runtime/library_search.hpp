#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace commcert {

// A library loaded at run time, found in the places a GPU node keeps it.
struct LibrarySpec {
  std::string name;                         // "nccl", as reports name it
  std::string soname;                       // "libnccl.so.2"
  std::string override_variable;            // a path that replaces the search when set
  std::vector<std::string> home_variables;  // e.g. NCCL_HOME: searched before the system path
};

// One place to try. `location` is a file path, or the bare soname for the dynamic linker's own
// search (LD_LIBRARY_PATH, ld.so.cache, the default directories).
struct LibraryCandidate {
  std::string location;
  std::string origin;  // "NCCL_HOME", "system library path", "python environment /opt/venv", ...
  bool operator==(const LibraryCandidate&) const = default;
};

using EnvironmentLookup = std::function<std::optional<std::string>(const std::string&)>;

// The process's own environment.
[[nodiscard]] EnvironmentLookup process_environment();

// Where to look, best first: the override variable alone when it is set; otherwise the home
// variables, the system search, CUDA_HOME/CUDA_PATH and /usr/local/cuda, then the `nvidia/*/lib`
// folders of Python environments (a PyTorch node may have NCCL only there). Only files that
// exist are listed, except the bare soname and the override (whose failure must be reported).
[[nodiscard]] std::vector<LibraryCandidate> library_candidates(
    const LibrarySpec& spec, const EnvironmentLookup& environment,
    const std::string& cuda_default = "/usr/local/cuda");

// Python installation prefixes to search: VIRTUAL_ENV, CONDA_PREFIX, the prefix of the first
// python3 on PATH (not following its symlink: a venv's python3 points at the system one),
// ~/.local, /usr/local and /usr. Duplicates removed, order kept.
[[nodiscard]] std::vector<std::string> python_prefixes(const EnvironmentLookup& environment);

}  // namespace commcert
