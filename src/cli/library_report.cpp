#include "cli/library_report.hpp"

#include <fmt/format.h>

#include "comm/gpu_runtime.hpp"
#include "comm/mpi_session_loader.hpp"
#include "core/build_info.hpp"
#include "runtime/runtime_library.hpp"
#include "runtime/shared_library.hpp"

namespace commcert {
namespace {

LibraryStatus status_of(const RuntimeLibrary& library) {
  LibraryStatus status{library.name,   library.loaded(), library.version,
                       library.path(), library.origin,   library.error};
  return status;
}

LibraryStatus mpi_status(const std::optional<std::string>& mpi_version) {
  LibraryStatus status{.name = "mpi"};
  if (!build_info::kWithMpi) {
    status.detail = "built without MPI";
    return status;
  }
  const MpiPlugin& plugin = mpi_plugin();
  if (!plugin.library) {
    status.detail = plugin.error;
    return status;
  }
  status.available = true;
  status.path = loaded_object_path("libmpi.so").value_or("");
  status.origin = "plugin " + plugin.path;
  if (mpi_version) {
    status.version = *mpi_version;
  } else if (auto version = reinterpret_cast<MpiLibraryVersion>(
                 plugin.library->symbol(kMpiPluginVersionEntryPoint))) {
    status.version = version();
  }
  return status;
}

}  // namespace

std::vector<LibraryStatus> runtime_libraries(const std::optional<std::string>& mpi_version) {
  std::vector<LibraryStatus> libraries;
  libraries.push_back(mpi_status(mpi_version));
  if (!build_info::kWithCuda) {
    for (const char* name : {"nccl", "cublasLt", "cuda_runtime"})
      libraries.push_back({.name = name, .detail = "built without CUDA"});
    return libraries;
  }
  libraries.push_back(status_of(nccl_runtime()));
  libraries.push_back(status_of(cublaslt_runtime()));
  const GpuRuntimeInfo gpu = probe_gpu_runtime();
  LibraryStatus runtime{.name = "cuda_runtime",
                        .available = true,
                        .path = "static",
                        .origin = "linked into commcert"};
  if (gpu.runtime_version) runtime.version = format_cuda_version(*gpu.runtime_version);
  libraries.push_back(runtime);
  LibraryStatus driver{.name = "cuda_driver"};
  if (auto path = loaded_object_path("libcuda.so")) {
    driver.available = true;
    driver.path = *path;
    if (gpu.driver_version) driver.version = format_cuda_version(*gpu.driver_version);
    driver.detail =
        gpu.device_count > 0 ? fmt::format("{} GPU(s)", gpu.device_count) : gpu.unavailable_reason;
  } else {
    driver.detail =
        gpu.unavailable_reason.empty() ? "libcuda.so.1 not loaded" : gpu.unavailable_reason;
  }
  libraries.push_back(driver);
  return libraries;
}

std::string format_library_lines(const std::vector<LibraryStatus>& libraries) {
  std::string text;
  for (const auto& library : libraries) {
    if (!library.available) {
      text += fmt::format("  {:<13}not available: {}\n", library.name, library.detail);
      continue;
    }
    std::string where = library.path;
    if (!library.origin.empty()) where += fmt::format(" ({})", library.origin);
    text += fmt::format("  {:<13}{:<8} {}\n", library.name,
                        library.version.empty() ? "?" : library.version, where);
    if (library.name == "mpi" || library.name == "cuda_driver") {
      if (!library.detail.empty()) text += fmt::format("  {:<13}{}\n", "", library.detail);
    }
  }
  return text;
}

std::vector<std::pair<std::string, MetaLibrary>> meta_libraries(
    const std::vector<LibraryStatus>& libraries) {
  const auto text_or_null = [](const std::string& text) {
    return text.empty() ? OrNull<std::string>() : OrNull<std::string>(text);
  };
  std::vector<std::pair<std::string, MetaLibrary>> out;
  out.reserve(libraries.size());
  for (const auto& library : libraries) {
    out.emplace_back(
        library.name,
        MetaLibrary{library.available, text_or_null(library.version), text_or_null(library.path),
                    text_or_null(library.origin), text_or_null(library.detail)});
  }
  return out;
}

}  // namespace commcert
