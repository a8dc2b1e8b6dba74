#pragma once

#include <optional>
#include <string>

namespace commcert {

// What the CUDA runtime and NCCL say about this machine. Never throws: "no GPU" is an answer.
struct GpuRuntimeInfo {
  int device_count = 0;
  std::string unavailable_reason;      // why device_count is 0 ("no driver", "built without CUDA")
  std::optional<int> runtime_version;  // e.g. 13000
  std::optional<int> driver_version;
  std::optional<int> nccl_version;  // e.g. 22809
};

[[nodiscard]] GpuRuntimeInfo probe_gpu_runtime();

// "13.0" from 13000; "2.28.9" from 22809; "2.8.4" from 2804 (NCCL before 2.9).
[[nodiscard]] std::string format_cuda_version(int version);
[[nodiscard]] std::string format_nccl_version(int version);

}  // namespace commcert
