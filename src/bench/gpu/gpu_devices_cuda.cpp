#include <array>
#include <cstring>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "bench/device_assignment.hpp"
#include "bench/gpu_devices.hpp"
#include "comm/cuda_errors.hpp"
#include "health/pci_address.hpp"

namespace commcert {

std::vector<GpuDescription> describe_gpus(const std::vector<int>& devices) {
  std::vector<GpuDescription> out;
  for (const int device : devices) {
    cudaDeviceProp prop{};
    COMMCERT_CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
    GpuDescription d;
    d.identity.index = device;
    d.cuda_device = device;
    d.identity.name = prop.name;
    std::array<unsigned char, 16> uuid{};
    std::memcpy(uuid.data(), prop.uuid.bytes, uuid.size());
    d.identity.uuid = format_gpu_uuid(uuid);
    d.identity.pci_bus_id =
        normalize_pci_bus_id(fmt::format("{:04x}:{:02x}:{:02x}.0", prop.pciDomainID, prop.pciBusID,
                                         prop.pciDeviceID))
            .value_or("");
    d.compute_capability = prop.major * 10 + prop.minor;
    d.sm_count = prop.multiProcessorCount;
    d.model = fmt::format("{} ({} SMs)", d.identity.name, d.sm_count);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace commcert
