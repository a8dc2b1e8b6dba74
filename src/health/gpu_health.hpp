#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/record.hpp"
#include "health/nvml_library.hpp"
#include "records/health.hpp"

namespace commcert {

// What NVML says about one GPU at rest: the record's fields (records/health.hpp, component gpu)
// and what decides its status.
struct GpuHealth : GpuHealthFields {
  unsigned index = 0;
  std::optional<std::string> unreachable;  // NVML gave no handle for this index: why
};

// Reads everything but the Xid events, which a watcher collects over the tool's run.
[[nodiscard]] GpuHealth probe_gpu_health(const NvmlLibrary& nvml, nvml::Device device,
                                         unsigned index);

// The record's `gpu` field for this GPU.
[[nodiscard]] GpuIdentity gpu_identity_of(const GpuHealth& health);

}  // namespace commcert
