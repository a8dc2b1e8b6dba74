#include "runtime/library_search.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <system_error>

namespace commcert {
namespace fs = std::filesystem;
namespace {

bool is_file(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error);  // follows symlinks: a dangling link is no library
}

void add_unique(std::vector<std::string>& list, std::string value) {
  if (value.empty()) return;
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(std::move(value));
}

// Sorted subdirectories of `directory` whose name starts with `prefix`.
std::vector<fs::path> subdirectories(const fs::path& directory, std::string_view prefix) {
  std::vector<fs::path> found;
  std::error_code error;
  for (fs::directory_iterator it(directory, error), end; !error && it != end; it.increment(error)) {
    std::error_code kind_error;
    if (!it->is_directory(kind_error)) continue;
    if (it->path().filename().string().rfind(prefix, 0) == 0) found.push_back(it->path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::optional<std::string> first_on_path(const std::string& program, const std::string& path) {
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find(':', start), path.size());
    const std::string directory = path.substr(start, end - start);
    if (!directory.empty()) {
      const fs::path candidate = fs::path(directory) / program;
      std::error_code error;
      if (fs::exists(candidate, error)) return candidate.string();
    }
    start = end + 1;
  }
  return std::nullopt;
}

}  // namespace

EnvironmentLookup process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (!value || !*value) return std::nullopt;
    return std::string(value);
  };
}

std::vector<std::string> python_prefixes(const EnvironmentLookup& environment) {
  std::vector<std::string> prefixes;
  for (const char* variable : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
    if (auto value = environment(variable)) add_unique(prefixes, *value);
  }
  if (auto path = environment("PATH")) {
    if (auto python = first_on_path("python3", *path)) {
      add_unique(prefixes, fs::path(*python).parent_path().parent_path().string());
    }
  }
  if (auto home = environment("HOME")) add_unique(prefixes, (fs::path(*home) / ".local").string());
  add_unique(prefixes, "/usr/local");
  add_unique(prefixes, "/usr");
  return prefixes;
}

std::vector<LibraryCandidate> library_candidates(const LibrarySpec& spec,
                                                 const EnvironmentLookup& environment,
                                                 const std::string& cuda_default) {
  if (!spec.override_variable.empty()) {
    if (auto path = environment(spec.override_variable)) {
      return {{*path, spec.override_variable}};
    }
  }
  std::vector<LibraryCandidate> candidates;
  const auto add_if_file = [&](const fs::path& path, const std::string& origin) {
    if (!is_file(path)) return;
    LibraryCandidate candidate{path.lexically_normal().string(), origin};
    if (std::find(candidates.begin(), candidates.end(), candidate) == candidates.end())
      candidates.push_back(std::move(candidate));
  };
  const auto add_home = [&](const fs::path& home, const std::string& origin) {
    for (const char* folder : {"lib", "lib64", "targets/x86_64-linux/lib"})
      add_if_file(home / folder / spec.soname, origin);
  };
  for (const auto& variable : spec.home_variables) {
    if (auto home = environment(variable)) add_home(*home, variable);
  }
  candidates.push_back({spec.soname, "system library path"});
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
    if (auto home = environment(variable)) add_home(*home, variable);
  }
  add_home(cuda_default, cuda_default);
  for (const auto& prefix : python_prefixes(environment)) {
    const std::string origin = "python environment " + prefix;
    for (const char* lib : {"lib", "lib64"}) {
      for (const auto& python : subdirectories(fs::path(prefix) / lib, "python3")) {
        for (const char* packages : {"site-packages", "dist-packages"}) {
          for (const auto& package : subdirectories(python / packages / "nvidia", "")) {
            add_if_file(package / "lib" / spec.soname, origin);
          }
        }
      }
    }
  }
  return candidates;
}

}  // namespace commcert
