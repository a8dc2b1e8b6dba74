#include "runtime/runtime_library.hpp"

#include <fmt/format.h>

#include "core/build_info.hpp"

namespace commcert {
namespace {

bool is_not_found(const std::string& error) {
  return error.find("cannot open shared object file") != std::string::npos;
}

std::string places_searched(const std::vector<LibraryCandidate>& candidates) {
  std::string text;
  for (const auto& candidate : candidates) {
    if (!text.empty()) text += ", ";
    text += candidate.location == candidate.origin || candidate.origin == "system library path"
                ? candidate.origin
                : fmt::format("{} ({})", candidate.location, candidate.origin);
  }
  return text;
}

}  // namespace

const std::string& RuntimeLibrary::path() const {
  static const std::string kNone;
  return library ? library->path() : kNone;
}

RuntimeLibrary load_runtime_library(const LibrarySpec& spec, const EnvironmentLookup& environment,
                                    const VersionReader& read_version,
                                    const std::string& cuda_default) {
  RuntimeLibrary result;
  result.name = spec.name;
  result.soname = spec.soname;
  const auto candidates = library_candidates(spec, environment, cuda_default);
  std::vector<std::string> failures;
  for (const auto& candidate : candidates) {
    std::string error;
    auto library = SharedLibrary::open(candidate.location, /*global=*/false, error);
    if (!library) {
      const bool searched_by_soname = candidate.location == spec.soname;
      if (!(searched_by_soname && is_not_found(error))) failures.push_back(error);
      continue;
    }
    result.origin = candidate.origin;
    if (read_version) result.version = read_version(*library);
    result.library = std::move(library);
    return result;
  }
  std::string hint = spec.override_variable;
  for (const auto& variable : spec.home_variables)
    hint = fmt::format("{} or {}", variable, hint);
  result.error = fmt::format("{} not found (searched: {}; set {} to its location)", spec.soname,
                             places_searched(candidates), hint);
  for (const auto& failure : failures)
    result.error += fmt::format("; {}", failure);
  return result;
}

std::string nccl_version_text(int code) {
  if (code >= 20900) return fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100);
  return fmt::format("{}.{}.{}", code / 1000, code / 100 % 10, code % 100);
}

std::string cublas_version_text(std::size_t code) {
  return fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100);
}

LibrarySpec nccl_library_spec() {
  return {"nccl", "libnccl.so.2", "COMMCERT_NCCL_LIBRARY", {"NCCL_HOME"}};
}

LibrarySpec cublaslt_library_spec(int cuda_major) {
  return {
      "cublasLt", fmt::format("libcublasLt.so.{}", cuda_major), "COMMCERT_CUBLASLT_LIBRARY", {}};
}

const RuntimeLibrary& nccl_runtime() {
  static const RuntimeLibrary kLibrary = load_runtime_library(
      nccl_library_spec(), process_environment(), [](const SharedLibrary& nccl) {
        using GetVersion = int (*)(int*);
        auto get_version = reinterpret_cast<GetVersion>(nccl.symbol("ncclGetVersion"));
        int code = 0;
        if (!get_version || get_version(&code) != 0) return std::string();
        return nccl_version_text(code);
      });
  return kLibrary;
}

const RuntimeLibrary& cublaslt_runtime() {
  static const RuntimeLibrary kLibrary = load_runtime_library(
      cublaslt_library_spec(build_info::kCudaMajor), process_environment(),
      [](const SharedLibrary& cublaslt) {
        using GetVersion = std::size_t (*)();
        auto get_version = reinterpret_cast<GetVersion>(cublaslt.symbol("cublasLtGetVersion"));
        return get_version ? cublas_version_text(get_version()) : std::string();
      });
  return kLibrary;
}

}  // namespace commcert
