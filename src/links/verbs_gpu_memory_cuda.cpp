#include <cuda.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "core/errors.hpp"
#include "links/verbs_gpu_memory.hpp"

namespace commcert {
namespace {

// The driver entry points, by the CUDA version whose signature we compiled against.
constexpr int kDriverApiVersion = 12000;
constexpr std::uint64_t kPage = std::uint64_t{2} << 20;

template <typename Function>
Function driver_entry(const char* name) {
  void* address = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(name, &address, kDriverApiVersion, cudaEnableDefault,
                                       &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    return nullptr;
  }
  return reinterpret_cast<Function>(address);
}

class CudaAllocation final : public GpuAllocation {
 public:
  // Whole 2 MiB pages: cuMemGetHandleForAddressRange exports page-aligned ranges only.
  CudaAllocation(int gpu, std::uint64_t bytes)
      : gpu_(gpu), bytes_((bytes + kPage - 1) / kPage * kPage) {
    if (const cudaError_t e = cudaSetDevice(gpu); e != cudaSuccess) {
      throw RuntimeFailure(fmt::format("--mem gpu: GPU {}: {}", gpu, cudaGetErrorString(e)));
    }
    if (const cudaError_t e = cudaMalloc(&pointer_, bytes_); e != cudaSuccess) {
      throw RuntimeFailure(fmt::format("--mem gpu: cudaMalloc of {} bytes on GPU {}: {}", bytes,
                                       gpu, cudaGetErrorString(e)));
    }
  }
  ~CudaAllocation() override { cudaFree(pointer_); }
  CudaAllocation(const CudaAllocation&) = delete;
  CudaAllocation& operator=(const CudaAllocation&) = delete;

  void* pointer() const override { return pointer_; }
  std::uint64_t bytes() const override { return bytes_; }

  bool dmabuf_supported() const override {
    const auto get_attribute =
        driver_entry<decltype(&cuDeviceGetAttribute)>("cuDeviceGetAttribute");
    if (!get_attribute) return false;
    int supported = 0;
    return get_attribute(&supported, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, gpu_) == CUDA_SUCCESS &&
           supported != 0;
  }

  int export_dmabuf(std::string& error) const override {
    const auto get_handle =
        driver_entry<decltype(&cuMemGetHandleForAddressRange)>("cuMemGetHandleForAddressRange");
    if (!get_handle) {
      error = "the CUDA driver has no cuMemGetHandleForAddressRange";
      return -1;
    }
    int fd = -1;
    const CUresult result = get_handle(&fd, reinterpret_cast<CUdeviceptr>(pointer_), bytes_,
                                       CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
    if (result != CUDA_SUCCESS) {
      error = fmt::format("cuMemGetHandleForAddressRange: CUresult {}", static_cast<int>(result));
      return -1;
    }
    return fd;
  }

 private:
  int gpu_;
  std::uint64_t bytes_;
  void* pointer_ = nullptr;
};

}  // namespace

std::unique_ptr<GpuAllocation> allocate_gpu_memory(int gpu, std::uint64_t bytes) {
  return std::make_unique<CudaAllocation>(gpu, bytes);
}

}  // namespace commcert
