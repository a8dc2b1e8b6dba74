#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace commcert {

// GPU memory for the verbs transport (--mem gpu). CUDA builds allocate with cudaMalloc and reach
// the driver's cuMemGetHandleForAddressRange and cuDeviceGetAttribute through
// cudaGetDriverEntryPointByVersion (libcuda is never linked); other builds throw.
class GpuAllocation {
 public:
  virtual ~GpuAllocation() = default;
  [[nodiscard]] virtual void* pointer() const = 0;
  [[nodiscard]] virtual std::uint64_t bytes() const = 0;
  // CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED on the allocation's GPU.
  [[nodiscard]] virtual bool dmabuf_supported() const = 0;
  // A dma-buf file descriptor for the whole allocation (the caller closes it), or -1 with
  // `error` set.
  [[nodiscard]] virtual int export_dmabuf(std::string& error) const = 0;
};

// Throws RuntimeFailure (no CUDA in this build, no such GPU, out of memory).
[[nodiscard]] std::unique_ptr<GpuAllocation> allocate_gpu_memory(int gpu, std::uint64_t bytes);

}  // namespace commcert
