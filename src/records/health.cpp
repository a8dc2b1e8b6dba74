#include "records/health.hpp"

#include <type_traits>

#include "records/json_values.hpp"

namespace commcert {
namespace {

Json ecc_counts_json(const EccCounts& counts) {
  return {{EccCounts::kCorrected, or_null(counts.corrected)},
          {EccCounts::kUncorrected, or_null(counts.uncorrected)}};
}

Json ecc_json(const std::optional<GpuEcc>& ecc) {
  if (!ecc) return nullptr;
  return {{GpuEcc::kEnabled, ecc->enabled},
          {GpuEcc::kVolatile, ecc_counts_json(ecc->volatile_counts)},
          {GpuEcc::kAggregate, ecc_counts_json(ecc->aggregate)}};
}

Json remapped_rows_json(const std::optional<GpuRemappedRows>& rows) {
  if (!rows) return nullptr;
  return {{GpuRemappedRows::kCorrectable, rows->correctable},
          {GpuRemappedRows::kUncorrectable, rows->uncorrectable},
          {GpuRemappedRows::kPending, rows->pending},
          {GpuRemappedRows::kFailure, rows->failure}};
}

Json retired_pages_json(const std::optional<GpuRetiredPages>& pages) {
  if (!pages) return nullptr;
  return {{GpuRetiredPages::kSingleBit, or_null(pages->single_bit)},
          {GpuRetiredPages::kDoubleBit, or_null(pages->double_bit)},
          {GpuRetiredPages::kPending, or_null(pages->pending)}};
}

Json pcie_json(const std::optional<GpuPcie>& pcie) {
  if (!pcie) return nullptr;
  return {{GpuPcie::kGenCurrent, or_null(pcie->gen_current)},
          {GpuPcie::kGenMax, or_null(pcie->gen_max)},
          {GpuPcie::kWidthCurrent, or_null(pcie->width_current)},
          {GpuPcie::kWidthMax, or_null(pcie->width_max)},
          {GpuPcie::kReplayCount, or_null(pcie->replay_count)}};
}

Json nvlink_json(const std::optional<std::vector<GpuNvLink>>& nvlink) {
  if (!nvlink) return nullptr;
  Json links = Json::array();
  for (const auto& link : *nvlink) {
    links.push_back({{GpuNvLink::kLink, link.link},
                     {GpuNvLink::kActive, link.active},
                     {GpuNvLink::kReplayErrors, or_null(link.replay_errors)},
                     {GpuNvLink::kRecoveryErrors, or_null(link.recovery_errors)},
                     {GpuNvLink::kCrcFlitErrors, or_null(link.crc_flit_errors)},
                     {GpuNvLink::kCrcDataErrors, or_null(link.crc_data_errors)}});
  }
  return links;
}

Json clocks_json(const std::optional<GpuClocks>& clocks) {
  if (!clocks) return nullptr;
  return {{GpuClocks::kSm, or_null(clocks->sm)},
          {GpuClocks::kMem, or_null(clocks->mem)},
          {GpuClocks::kSmMax, or_null(clocks->sm_max)},
          {GpuClocks::kMemMax, or_null(clocks->mem_max)}};
}

void add_fields(Json& out, const GpuHealthFields& h) {
  using F = GpuHealthFields;
  out[HealthRecord::kComponent] = HealthRecord::kComponentGpu;
  out[F::kName] = or_null(h.name);
  out[F::kUuid] = or_null(h.uuid);
  out[F::kPciBusId] = or_null(h.pci_bus_id);
  out[F::kSerial] = or_null(h.serial);
  out[F::kVbios] = or_null(h.vbios);
  out[F::kDriverVersion] = or_null(h.driver_version);
  out[F::kEcc] = ecc_json(h.ecc);
  out[F::kRemappedRows] = remapped_rows_json(h.remapped_rows);
  out[F::kRetiredPages] = retired_pages_json(h.retired_pages);
  out[F::kPcie] = pcie_json(h.pcie);
  out[F::kNvlink] = nvlink_json(h.nvlink);
  out[F::kTemperatureC] = or_null(h.temperature_c);
  out[F::kPowerW] = or_null(h.power_w);
  out[F::kClocksMhz] = clocks_json(h.clocks);
  out[F::kClockEventReasons] = or_null(h.clock_event_reasons);
  out[F::kPersistenceMode] = or_null(h.persistence_mode);
  out[F::kXidEvents] = xid_events_json(h.xid_events);
  Json errors = Json::array();
  for (const auto& error : h.query_errors)
    errors.push_back(
        {{HealthQueryError::kQuery, error.query}, {HealthQueryError::kError, error.error}});
  out[F::kQueryErrors] = std::move(errors);
  if (h.lost) out[F::kLost] = true;
}

void add_fields(Json& out, const IbPortHealthFields& port) {
  using F = IbPortHealthFields;
  out[HealthRecord::kComponent] = HealthRecord::kComponentIbPort;
  out[F::kDevice] = port.device;
  out[F::kPort] = port.port;
  out[F::kState] = or_null(port.state);
  out[F::kPhysState] = or_null(port.phys_state);
  out[F::kRateGbps] = or_null(port.rate_gbps);
  out[F::kLinkLayer] = or_null(port.link_layer);
  Json counters = Json::object();
  for (const auto& [name, value] : port.counters)
    counters[name] = value;
  out[F::kCounters] = std::move(counters);
}

void add_fields(Json& out, const NodeHealthFields& node) {
  using F = NodeHealthFields;
  out[HealthRecord::kComponent] = HealthRecord::kComponentNode;
  out[F::kGpuCount] = or_null(node.gpu_count);
  out[F::kIbPortCount] = node.ib_port_count;
  out[F::kAffinity] = node.affinity;
  out[F::kTopologySource] = or_null(node.topology_source);
  out[F::kVerbs] = node.verbs;
}

}  // namespace

Json xid_events_json(const std::optional<std::vector<XidEvent>>& events) {
  if (!events) return nullptr;
  Json out = Json::array();
  for (const auto& event : *events)
    out.push_back({{XidEvent::kXid, event.xid}, {XidEvent::kTime, event.time}});
  return out;
}

Json to_json(const HealthRecord& record) {
  Json out = make_record(record, HealthRecord::kKind);
  std::visit(
      [&](const auto& fields) {
        if constexpr (std::is_same_v<std::decay_t<decltype(fields)>, std::monostate>) {
          out[HealthRecord::kComponent] = record.component;
        } else {
          add_fields(out, fields);
        }
      },
      record.fields);
  return out;
}

}  // namespace commcert
