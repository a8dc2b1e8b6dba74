#include "links/verbs_gpu_registration.hpp"

#include <system_error>

namespace commcert {

std::string_view name_of(GpuRegistration registration) {
  return registration == GpuRegistration::kDmaBuf ? "dmabuf" : "peer_memory";
}

GpuRegistrationPlan plan_gpu_registration(const GpuRegistrationFacts& facts) {
  GpuRegistrationPlan plan;
  std::string left_out;
  if (facts.verbs_has_dmabuf && facts.cuda_has_dmabuf) {
    plan.order.push_back(GpuRegistration::kDmaBuf);
  } else {
    left_out = facts.verbs_has_dmabuf
                   ? "dma-buf: the CUDA driver does not export GPU memory as dma-buf"
                   : "dma-buf: this libibverbs has no ibv_reg_dmabuf_mr";
  }
  // Peer memory is always the last try: a module built into the kernel shows nowhere in sysfs,
  // and ibv_reg_mr on a device pointer without one only fails.
  plan.order.push_back(GpuRegistration::kPeerMemory);
  if (!facts.peer_memory_loaded) {
    left_out += std::string(left_out.empty() ? "" : "; ") +
                "peer memory: no nvidia_peermem module seen in sysfs";
  }
  plan.why = left_out;
  return plan;
}

bool peer_memory_module_loaded(const std::filesystem::path& sysfs_root) {
  std::error_code error;
  return std::filesystem::exists(sysfs_root / "module" / "nvidia_peermem", error) ||
         std::filesystem::exists(sysfs_root / "module" / "nv_peer_mem", error);
}

}  // namespace commcert
