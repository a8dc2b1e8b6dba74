#include "records/health.hpp"
#include "validate/detail/record_common.hpp"

namespace commcert::detail {
namespace {

using G = GpuHealthFields;
using P = IbPortHealthFields;
using N = NodeHealthFields;

void read_ecc(od::value& value, GpuHealthEvidence& gpu) {
  if (is_null(value, G::kEcc)) return;
  // "ecc.volatile", for messages about the counters inside it.
  static const std::string kVolatilePath = fmt::format("{}.{}", G::kEcc, GpuEcc::kVolatile);
  for_each_field(object_of(value), G::kEcc, [&](std::string_view k, od::value& v) {
    if (k != GpuEcc::kVolatile || is_null(v, kVolatilePath)) return;
    for_each_field(object_of(v), k, [&](std::string_view vk, od::value& vv) {
      if (vk == EccCounts::kUncorrected) {
        gpu.ecc_volatile_uncorrected = optional_count(vv, {kVolatilePath, EccCounts::kUncorrected});
      } else if (vk == EccCounts::kCorrected) {
        gpu.ecc_volatile_corrected = optional_count(vv, {kVolatilePath, EccCounts::kCorrected});
      }
    });
  });
}

void read_remapped_rows(od::value& value, GpuHealthEvidence& gpu) {
  using R = GpuRemappedRows;
  if (is_null(value, G::kRemappedRows)) return;
  for_each_field(object_of(value), G::kRemappedRows, [&](std::string_view k, od::value& v) {
    if (k == R::kCorrectable) {
      gpu.remap_correctable = optional_count(v, {G::kRemappedRows, R::kCorrectable});
    } else if (k == R::kUncorrectable) {
      gpu.remap_uncorrectable = optional_count(v, {G::kRemappedRows, R::kUncorrectable});
    } else if (k == R::kPending) {
      gpu.remap_pending = optional_boolean(v, {G::kRemappedRows, R::kPending});
    } else if (k == R::kFailure) {
      gpu.remap_failure = optional_boolean(v, {G::kRemappedRows, R::kFailure});
    }
  });
}

void read_retired(od::value& value, GpuHealthEvidence& gpu) {
  using R = GpuRetiredPages;
  if (is_null(value, G::kRetiredPages)) return;
  for_each_field(object_of(value), G::kRetiredPages, [&](std::string_view k, od::value& v) {
    if (k == R::kSingleBit) {
      gpu.retired_single_bit = optional_count(v, {G::kRetiredPages, R::kSingleBit});
    } else if (k == R::kDoubleBit) {
      gpu.retired_double_bit = optional_count(v, {G::kRetiredPages, R::kDoubleBit});
    } else if (k == R::kPending) {
      gpu.retired_pending = optional_boolean(v, {G::kRetiredPages, R::kPending});
    }
  });
}

// A PCIe generation or width of 0 or less is no reading (no link has generation 0 or no lanes):
// the record stays valid and the figure counts as unread, so no rule ever compares it; what
// was read instead goes to `not_read`.
std::optional<int> pcie_link_figure(od::value& value, std::string_view field,
                                    std::optional<int>* not_read = nullptr) {
  const std::optional<int> figure = optional_small_int(value, {G::kPcie, field});
  if (figure && *figure <= 0 && not_read) *not_read = figure;
  return figure && *figure > 0 ? figure : std::nullopt;
}

void read_pcie(od::value& value, GpuHealthEvidence& gpu) {
  if (is_null(value, G::kPcie)) return;
  for_each_field(object_of(value), G::kPcie, [&](std::string_view k, od::value& v) {
    if (k == GpuPcie::kGenCurrent) {
      gpu.pcie_gen = pcie_link_figure(v, GpuPcie::kGenCurrent, &gpu.pcie_gen_not_read);
    } else if (k == GpuPcie::kGenMax) {
      gpu.pcie_gen_max = pcie_link_figure(v, GpuPcie::kGenMax);
    } else if (k == GpuPcie::kWidthCurrent) {
      gpu.pcie_width = pcie_link_figure(v, GpuPcie::kWidthCurrent, &gpu.pcie_width_not_read);
    } else if (k == GpuPcie::kWidthMax) {
      gpu.pcie_width_max = pcie_link_figure(v, GpuPcie::kWidthMax);
    } else if (k == GpuPcie::kReplayCount) {
      gpu.pcie_replays = optional_count(v, {G::kPcie, GpuPcie::kReplayCount});
    }
  });
}

void read_nvlinks(od::value& value, GpuHealthEvidence& gpu) {
  using L = GpuNvLink;
  if (is_null(value, G::kNvlink)) return;
  gpu.nvlinks.emplace();
  for_each_element(array(value, G::kNvlink), G::kNvlink, [&](od::value& element) {
    NvlinkEvidence link;
    for_each_field(object_of(element), G::kNvlink, [&](std::string_view k, od::value& v) {
      if (k == L::kLink) {
        link.link = small_int(v, {G::kNvlink, L::kLink, true});
      } else if (k == L::kActive) {
        link.active = optional_boolean(v, {G::kNvlink, L::kActive, true});
      } else if (k == L::kReplayErrors) {
        link.replay_errors = optional_count(v, {G::kNvlink, L::kReplayErrors, true});
      } else if (k == L::kRecoveryErrors) {
        link.recovery_errors = optional_count(v, {G::kNvlink, L::kRecoveryErrors, true});
      } else if (k == L::kCrcFlitErrors) {
        link.crc_flit_errors = optional_count(v, {G::kNvlink, L::kCrcFlitErrors, true});
      } else if (k == L::kCrcDataErrors) {
        link.crc_data_errors = optional_count(v, {G::kNvlink, L::kCrcDataErrors, true});
      }
    });
    gpu.nvlinks->push_back(link);
  });
  gpu.nvlinks->shrink_to_fit();  // 18 links would otherwise keep room for 32
}

// A node's count of GPUs or ports: one that is not a count (a negative number, another type)
// refuses the record, as every count does (docs/records.md), never read as "none" or "fewer".
std::optional<int> node_count(od::value& value, std::string_view field) {
  const std::optional<std::int64_t> count = optional_count(value, field);
  if (count && *count > 1'000'000'000)
    record_error(field, fmt::format("out of range ({})", *count));
  if (!count) return std::nullopt;
  return static_cast<int>(*count);
}

// Fields of every component share one record shape: each key goes to the component that has it.
struct HealthFields {
  std::string_view component;
  GpuHealthEvidence gpu;
  IbPortEvidence port;
  NodeHealthEvidence node;

  void field(Evidence& evidence, std::string_view key, od::value& value) {
    StringPool& strings = evidence.strings;
    if (key == HealthRecord::kComponent) {
      component = string(value, key);
    } else if (key == G::kEcc) {
      read_ecc(value, gpu);
    } else if (key == G::kRemappedRows) {
      read_remapped_rows(value, gpu);
    } else if (key == G::kRetiredPages) {
      read_retired(value, gpu);
    } else if (key == G::kPcie) {
      read_pcie(value, gpu);
    } else if (key == G::kNvlink) {
      read_nvlinks(value, gpu);
    } else if (key == G::kTemperatureC) {
      gpu.temperature_c = optional_number(value, key);
    } else if (key == G::kClockEventReasons) {
      if (is_null(value, key)) return;
      for_each_element(array(value, key), key, [&](od::value& element) {
        gpu.clock_events.push_back(strings.intern(string(element, key)));
      });
    } else if (key == G::kXidEvents) {
      gpu.xids = read_xids(value, key, strings);
    } else if (key == P::kDevice) {
      port.device = strings.intern(string(value, key));
    } else if (key == P::kPort) {
      port.port = small_int(value, key);
    } else if (key == P::kState) {
      port.state = strings.intern(optional_string(value, key).value_or(""));
    } else if (key == P::kPhysState) {
      port.phys_state = strings.intern(optional_string(value, key).value_or(""));
    } else if (key == G::kLost) {
      gpu.lost = optional_boolean(value, key).value_or(false);
    } else if (key == G::kSource) {
      gpu.from_dcgm = optional_string(value, key) == G::kSourceDcgm;
    } else if (key == G::kDcgmLevel) {
      gpu.dcgm_level = optional_small_int(value, key);
    } else if (key == P::kLinkLayer) {
      port.link_layer = strings.intern(optional_string(value, key).value_or(""));
    } else if (key == P::kRateGbps) {
      port.rate_gbps = optional_number(value, key);
    } else if (key == P::kCounters) {
      if (is_null(value, key)) return;
      for_each_field(object_of(value), key, [&](std::string_view k, od::value& v) {
        if (const auto count = optional_count(v, {P::kCounters, k})) {
          port.counters.emplace_back(strings.intern(k), *count);
        }
      });
    } else if (key == N::kGpuCount) {
      node.gpu_count = node_count(value, key);
    } else if (key == N::kIbPortCount) {
      node.ib_port_count = node_count(value, key);
    }
  }
};

}  // namespace

void parse_health(ParseState& state, od::object& object, EvidenceRef ref) {
  Evidence& evidence = state.evidence;
  HealthFields f;
  const CommonFields c = state.read(
      object, [&](std::string_view key, od::value& value) { f.field(evidence, key, value); });
  const NodeId host = evidence.nodes.intern(*c.host);
  // A failed component is rule.health_stage_fail's (stage.fail), a lost GPU rule.gpu_lost's.
  const auto fault = [&](std::string check, bool judged) {
    if (is_fault(*c.status)) {
      state.add_fault(c, ref, HealthRecord::kKind, std::move(check)).judged_by =
          judged ? FaultRecord::KindRule::kHost : FaultRecord::KindRule::kNone;
    }
  };
  const bool failed = *c.status == RecordStatus::kFail;
  if (f.component == HealthRecord::kComponentGpu) {
    state.fill_gpu_record(f.gpu, c, ref);
    fault("health.gpu", failed || f.gpu.lost);
    evidence.gpu_health.push_back(std::move(f.gpu));
  } else if (f.component == HealthRecord::kComponentIbPort) {
    f.port.ref = ref;
    f.port.node = host;
    f.port.status = *c.status;
    f.port.reason = c.reason;
    fault("health.ib", failed);
    evidence.ib_ports.push_back(std::move(f.port));
  } else if (f.component == HealthRecord::kComponentNode) {
    f.node.ref = ref;
    f.node.node = host;
    f.node.status = *c.status;
    f.node.reason = c.reason;
    fault("health.node", failed);
    evidence.node_health.push_back(std::move(f.node));
  } else if (f.component.empty() && *c.status != RecordStatus::kOk) {
    // A health stage that timed out or failed before it looked at any component.
    evidence.health_failures.push_back(
        {ref, evidence.run_index(*c.run_id), host, std::string(c.reason), *c.status});
    fault("health", false);
  } else {
    record_error(HealthRecord::kComponent, fmt::format("unknown component '{}'", f.component));
  }
}

}  // namespace commcert::detail
