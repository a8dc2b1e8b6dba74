#pragma once

#include <string>
#include <vector>

#include "core/record.hpp"

namespace commcert {

// What a stage needs to know about a CUDA device before using it.
struct GpuDescription {
  GpuIdentity identity;        // index: node-wide (NVML's), once the stage has resolved it
  int cuda_device = 0;         // CUDA ordinal as this process sees it: what cudaSetDevice takes
  std::string model;           // name and SM count: GPUs that must compute bit-identical results
  int compute_capability = 0;  // major * 10 + minor
  int sm_count = 0;
};

// Describes the given CUDA devices; identity.index is the CUDA ordinal until the caller sets
// the node-wide one (NodeGpuIndex). Throws RuntimeFailure when CUDA cannot (a build without CUDA
// has no devices to describe).
[[nodiscard]] std::vector<GpuDescription> describe_gpus(const std::vector<int>& devices);

}  // namespace commcert
