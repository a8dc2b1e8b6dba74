#include "health/gpu_health.hpp"

#include <fmt/format.h>

#include "health/clock_event_reasons.hpp"
#include "health/pci_address.hpp"

namespace commcert {
namespace {

// Keeps a query's value; notes why there is none unless the GPU simply cannot tell.
class Collector {
 public:
  Collector(const NvmlLibrary& nvml, GpuHealth& health) : nvml_(nvml), health_(health) {}

  template <typename T>
  std::optional<T> take(const NvmlResult<T>& result, const char* query) {
    if (result.ok()) return result.value;
    if (result.gpu_lost()) health_.lost = true;
    // Unsupported is missing evidence, not a fault. An invalid argument is NVML's answer for a
    // link index past the GPU's last link.
    if (!result.unsupported() && result.code != nvml::kErrorInvalidArgument) {
      health_.query_errors.push_back({query, nvml_.describe(result.code)});
    }
    return std::nullopt;
  }

 private:
  const NvmlLibrary& nvml_;
  GpuHealth& health_;
};

// One ECC counter (nvml::kVolatileEcc or kAggregateEcc), its queries named ecc.<scope>.<kind>.
EccCounts ecc_counts(Collector& c, const NvmlLibrary& nvml, nvml::Device device, int counter,
                     std::string_view scope) {
  const std::string corrected = fmt::format("ecc.{}.corrected", scope);
  const std::string uncorrected = fmt::format("ecc.{}.uncorrected", scope);
  EccCounts counts;
  counts.corrected =
      c.take(nvml.ecc_errors(device, nvml::kMemoryErrorCorrected, counter), corrected.c_str());
  counts.uncorrected =
      c.take(nvml.ecc_errors(device, nvml::kMemoryErrorUncorrected, counter), uncorrected.c_str());
  return counts;
}

// ECC counts, remapped rows and retired pages: the GPU memory's own account of its errors.
void probe_memory_errors(Collector& c, const NvmlLibrary& nvml, nvml::Device device, GpuHealth& h) {
  if (auto enabled = c.take(nvml.ecc_enabled(device), "ecc.enabled")) {
    GpuEcc ecc;
    ecc.enabled = *enabled;
    ecc.volatile_counts = ecc_counts(c, nvml, device, nvml::kVolatileEcc, "volatile");
    ecc.aggregate = ecc_counts(c, nvml, device, nvml::kAggregateEcc, "aggregate");
    h.ecc = ecc;
  }

  if (auto rows = c.take(nvml.remapped_rows(device), "remapped_rows")) {
    h.remapped_rows =
        GpuRemappedRows{rows->correctable, rows->uncorrectable, rows->pending, rows->failure};
  }
  GpuRetiredPages pages;
  pages.single_bit = c.take(nvml.retired_pages(device, nvml::kRetiredMultipleSingleBit),
                            "retired_pages.single_bit");
  pages.double_bit =
      c.take(nvml.retired_pages(device, nvml::kRetiredDoubleBit), "retired_pages.double_bit");
  if (pages.single_bit || pages.double_bit) {
    pages.pending = c.take(nvml.retired_pages_pending(device), "retired_pages.pending");
    h.retired_pages = pages;
  }
}

void probe_pcie(Collector& c, const NvmlLibrary& nvml, nvml::Device device, GpuHealth& h) {
  GpuPcie pcie;
  pcie.gen_current = c.take(nvml.pcie_generation(device, false), "pcie.gen_current");
  pcie.gen_max = c.take(nvml.pcie_generation(device, true), "pcie.gen_max");
  pcie.width_current = c.take(nvml.pcie_width(device, false), "pcie.width_current");
  pcie.width_max = c.take(nvml.pcie_width(device, true), "pcie.width_max");
  pcie.replay_count = c.take(nvml.pcie_replay_counter(device), "pcie.replay_count");
  if (pcie.gen_current || pcie.gen_max || pcie.width_current || pcie.width_max ||
      pcie.replay_count) {
    h.pcie = pcie;
  }
}

// Every link NVML reports on, with its error counters.
void probe_nvlinks(Collector& c, const NvmlLibrary& nvml, nvml::Device device, GpuHealth& h) {
  std::vector<GpuNvLink> links;
  for (unsigned link = 0; link < nvml::kNvLinkMaxLinks; ++link) {
    const auto active = c.take(nvml.nvlink_active(device, link), "nvlink.state");
    if (!active) continue;
    GpuNvLink entry;
    entry.link = link;
    entry.active = *active;
    entry.replay_errors = c.take(nvml.nvlink_error_counter(device, link, nvml::kNvLinkErrorReplay),
                                 "nvlink.replay_errors");
    entry.recovery_errors =
        c.take(nvml.nvlink_error_counter(device, link, nvml::kNvLinkErrorRecovery),
               "nvlink.recovery_errors");
    entry.crc_flit_errors =
        c.take(nvml.nvlink_error_counter(device, link, nvml::kNvLinkErrorCrcFlit),
               "nvlink.crc_flit_errors");
    entry.crc_data_errors =
        c.take(nvml.nvlink_error_counter(device, link, nvml::kNvLinkErrorCrcData),
               "nvlink.crc_data_errors");
    links.push_back(entry);
  }
  if (!links.empty()) h.nvlink = std::move(links);
}

void probe_clocks(Collector& c, const NvmlLibrary& nvml, nvml::Device device, GpuHealth& h) {
  GpuClocks clocks;
  clocks.sm = c.take(nvml.clock_mhz(device, nvml::kClockSm), "clocks.sm");
  clocks.mem = c.take(nvml.clock_mhz(device, nvml::kClockMem), "clocks.mem");
  clocks.sm_max = c.take(nvml.max_clock_mhz(device, nvml::kClockSm), "clocks.sm_max");
  clocks.mem_max = c.take(nvml.max_clock_mhz(device, nvml::kClockMem), "clocks.mem_max");
  if (clocks.sm || clocks.mem || clocks.sm_max || clocks.mem_max) h.clocks = clocks;
  if (auto reasons = c.take(nvml.clock_event_reasons(device), "clock_event_reasons")) {
    h.clock_event_reasons = clock_event_reason_names(*reasons);
  }
}

}  // namespace

GpuHealth probe_gpu_health(const NvmlLibrary& nvml, nvml::Device device, unsigned index) {
  GpuHealth h;
  h.index = index;
  Collector c(nvml, h);
  h.name = c.take(nvml.name(device), "name");
  h.uuid = c.take(nvml.uuid(device), "uuid");
  if (auto bus = c.take(nvml.pci_bus_id(device), "pci_bus_id")) {
    h.pci_bus_id = normalize_pci_bus_id(*bus).value_or(*bus);
  }
  h.serial = c.take(nvml.serial(device), "serial");
  h.vbios = c.take(nvml.vbios_version(device), "vbios");
  h.driver_version = c.take(nvml.driver_version(), "driver_version");

  probe_memory_errors(c, nvml, device, h);
  probe_pcie(c, nvml, device, h);
  probe_nvlinks(c, nvml, device, h);

  h.temperature_c = c.take(nvml.temperature_c(device), "temperature_c");
  if (auto power = c.take(nvml.power_mw(device), "power_w")) h.power_w = *power / 1000.0;
  probe_clocks(c, nvml, device, h);
  h.persistence_mode = c.take(nvml.persistence_mode(device), "persistence_mode");
  return h;
}

GpuIdentity gpu_identity_of(const GpuHealth& health) {
  GpuIdentity gpu;
  gpu.index = static_cast<int>(health.index);
  gpu.uuid = health.uuid.value_or("");
  gpu.pci_bus_id = health.pci_bus_id.value_or("");
  gpu.name = health.name.value_or("");
  return gpu;
}

}  // namespace commcert
