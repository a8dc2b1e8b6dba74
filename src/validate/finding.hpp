#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "validate/evidence.hpp"
#include "validate/reasons.hpp"

namespace commcert {

// The part a reason points at beyond the node and GPU.
struct LinkRef {
  std::string type;                // "nvlink", "ib_port" or "hosts"
  std::string device;              // IB device, e.g. mlx5_0
  int index = -1;                  // NVLink number or IB port number
  std::vector<std::string> hosts;  // for "hosts": the nodes sharing a figure
};

// What one rule found about one node; the fold turns findings into reasons (catalog text).
struct Finding {
  ReasonCode code = "evidence.missing";  // a row of the reason catalog
  NodeId node = kNoString;
  std::string check;
  std::string rule;
  GpuKey gpu;  // index -1: not about one GPU
  std::optional<LinkRef> link;
  std::optional<double> measured;
  std::optional<double> limit;
  std::string unit;
  ReasonFields fields;  // values for the catalog template
  std::vector<EvidenceRef> evidence;
};

// Numbers as a technician reads them: 463.2, 0.2059, 12.
[[nodiscard]] std::string format_figure(double value);

// "gpu 3 (GPU-8c1f...): " for a GPU, empty otherwise: the {where} of catalog messages.
[[nodiscard]] std::string gpu_where(const Evidence& evidence, const GpuKey& gpu);

}  // namespace commcert
