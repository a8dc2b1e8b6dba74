#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace commcert {

// How a GPU buffer is registered with the NIC for GPUDirect RDMA (docs/links.md, "GPU memory").
enum class GpuRegistration {
  kDmaBuf,      // cuMemGetHandleForAddressRange -> dma-buf fd -> ibv_reg_dmabuf_mr (upstream path)
  kPeerMemory,  // ibv_reg_mr on the device pointer, served by the nvidia-peermem kernel module
};

[[nodiscard]] std::string_view name_of(GpuRegistration registration);  // "dmabuf", "peer_memory"

// What the node offers, each read where it is (the verbs library, the CUDA driver, sysfs).
struct GpuRegistrationFacts {
  bool verbs_has_dmabuf = false;    // libibverbs exports ibv_reg_dmabuf_mr
  bool cuda_has_dmabuf = false;     // CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED on the buffer's GPU
  bool peer_memory_loaded = false;  // nvidia-peermem (or the older nv_peer_mem) is loaded
};

struct GpuRegistrationPlan {
  std::vector<GpuRegistration> order;  // what to try, first first
  std::string why;                     // what was left out or looks unlikely, and why
};

// dma-buf when both libibverbs and the CUDA driver offer it, then peer memory (always tried last;
// `why` says when its module was not seen); the transport tries them in order and records the
// one that worked. Pure.
[[nodiscard]] GpuRegistrationPlan plan_gpu_registration(const GpuRegistrationFacts& facts);

// Whether a peer-memory module is loaded: <sysfs>/module/nvidia_peermem or /module/nv_peer_mem.
[[nodiscard]] bool peer_memory_module_loaded(const std::filesystem::path& sysfs_root);

}  // namespace commcert
