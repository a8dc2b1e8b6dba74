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
  std::string type;    // "nvlink", "ib_port", "hosts" or "switch_path"
  std::string device;  // IB device, e.g. mlx5_0; for "switch_path": the path in words, as the
                       // reason names it ("leaf-a <-> spine1, spine2 (uplink of leaf-a)")
  int index = -1;      // NVLink number or IB port number
  // For "hosts": the nodes sharing a figure; for "switch_path": the switches the topology names
  // on it (none without a topology).
  std::vector<std::string> hosts;
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

// Four significant digits: a baseline states expectations, not measurement noise.
[[nodiscard]] double round_figure(double value);

// "gpu 3 (GPU-8c1f...): " for a GPU, empty otherwise: the {where} of catalog messages.
[[nodiscard]] std::string gpu_where(const Evidence& evidence, const GpuKey& gpu);

}  // namespace commcert
