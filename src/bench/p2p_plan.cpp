#include "bench/p2p_plan.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <random>
#include <stdexcept>

#include "core/stats.hpp"
#include "health/pci_address.hpp"

namespace commcert {
namespace {

constexpr std::array kAccesses = {P2pAccess::kWrite, P2pAccess::kRead};

// The GPU whose stream runs a GPU-to-GPU copy.
int issuer(P2pAccess access, int src, int dst) {
  return access == P2pAccess::kWrite ? src : dst;
}

P2pStream gpu_stream(P2pAccess access, int src, int dst) {
  return {issuer(access, src, dst), P2pEndpoint::device(src), P2pEndpoint::device(dst)};
}

std::vector<P2pMethod> copy_methods(const P2pSelection& s) {
  std::vector<P2pMethod> methods;
  if (s.copy_engine) methods.push_back(P2pMethod::kCopyEngine);
  if (s.sm_copy) methods.push_back(P2pMethod::kSmCopy);
  return methods;
}

bool can_pair(const std::vector<std::vector<bool>>& peer_access, int a, int b) {
  const auto at = [&](int x, int y) {
    const auto ux = static_cast<std::size_t>(x);
    const auto uy = static_cast<std::size_t>(y);
    return ux < peer_access.size() && uy < peer_access[ux].size() && peer_access[ux][uy];
  };
  return at(a, b) && at(b, a);
}

void plan_pairs(int gpus, const std::vector<std::vector<bool>>& peer_access, const P2pSelection& s,
                std::vector<P2pTest>& out) {
  if (gpus == 1) {
    P2pTest lone;
    lone.skip_reason = "one GPU";
    lone.skipped_src = 0;
    out.push_back(std::move(lone));
    return;
  }
  for (int a = 0; a < gpus; ++a) {
    for (int b = 0; b < gpus; ++b) {
      if (a == b) continue;
      if (!can_pair(peer_access, a, b)) {
        // One record per ordered pair says so; the validator reads it as "not measured".
        P2pTest none;
        none.peer_access = false;
        none.skipped_src = a;
        none.skipped_dst = b;
        // The record names both GPUs (src_gpu, dst_gpu) by their node-wide indices.
        none.skip_reason = "no peer access between these GPUs (cudaDeviceCanAccessPeer)";
        out.push_back(std::move(none));
        continue;
      }
      for (const P2pMethod method : copy_methods(s)) {
        for (const P2pAccess access : kAccesses) {
          P2pTest t;
          t.method = method;
          t.access = access;
          t.peer_access = true;
          t.streams = {gpu_stream(access, a, b)};
          out.push_back(std::move(t));
          // Bidirectional once per unordered pair: both directions come from one run.
          if (a < b) {
            P2pTest both = out.back();
            both.bidirectional = true;
            both.streams.push_back(gpu_stream(access, b, a));
            out.push_back(std::move(both));
          }
        }
      }
      if (s.pointer_chase) {
        // The destination GPU chases pointers through the source's memory: a's memory, b's loads.
        P2pTest chase;
        chase.method = P2pMethod::kPointerChase;
        chase.access = P2pAccess::kRead;
        chase.peer_access = true;
        chase.streams = {gpu_stream(P2pAccess::kRead, a, b)};
        out.push_back(std::move(chase));
      }
    }
  }
}

void plan_host(int gpus, const HostNuma& numa, const P2pSelection& s, std::vector<P2pTest>& out) {
  if (!s.copy_engine) return;
  for (int g = 0; g < gpus; ++g) {
    const auto ug = static_cast<std::size_t>(g);
    const std::optional<int> own = ug < numa.gpu_node.size() ? numa.gpu_node[ug] : std::nullopt;
    std::vector<std::pair<std::optional<int>, std::optional<bool>>> sides;
    if (!own) {
      sides.emplace_back(std::nullopt, std::nullopt);
    } else {
      sides.emplace_back(own, true);
      const auto other = std::find_if(numa.online_nodes.begin(), numa.online_nodes.end(),
                                      [&](int node) { return node != *own; });
      if (other != numa.online_nodes.end()) sides.emplace_back(*other, false);
    }
    for (const auto& [node, local] : sides) {
      for (const bool to_device : {true, false}) {
        P2pTest t;
        t.path = P2pPath::kHostGpu;
        t.method = P2pMethod::kCopyEngine;
        t.host_numa_local = local;
        const P2pEndpoint host = P2pEndpoint::host(node);
        const P2pEndpoint device = P2pEndpoint::device(g);
        t.streams = {to_device ? P2pStream{g, host, device} : P2pStream{g, device, host}};
        out.push_back(std::move(t));
      }
    }
  }
}

void plan_local(int gpus, const P2pSelection& s, std::vector<P2pTest>& out) {
  std::vector<P2pMethod> methods = copy_methods(s);
  if (s.pointer_chase) methods.push_back(P2pMethod::kPointerChase);
  for (int g = 0; g < gpus; ++g) {
    for (const P2pMethod method : methods) {
      P2pTest t;
      t.path = P2pPath::kDeviceLocal;
      t.method = method;
      t.streams = {{g, P2pEndpoint::device(g), P2pEndpoint::device(g)}};
      out.push_back(std::move(t));
    }
  }
}

}  // namespace

std::string_view name_of(P2pPath path) {
  switch (path) {
    case P2pPath::kGpuGpu:
      return "gpu_gpu";
    case P2pPath::kHostGpu:
      return "host_gpu";
    case P2pPath::kDeviceLocal:
      return "device_local";
  }
  return "?";
}

std::string_view name_of(P2pMethod method) {
  switch (method) {
    case P2pMethod::kCopyEngine:
      return "copy_engine";
    case P2pMethod::kSmCopy:
      return "sm_copy";
    case P2pMethod::kPointerChase:
      return "pointer_chase";
  }
  return "?";
}

std::string_view name_of(P2pAccess access) {
  return access == P2pAccess::kWrite ? "write" : "read";
}

std::vector<P2pTest> plan_p2p_tests(int gpu_count,
                                    const std::vector<std::vector<bool>>& peer_access,
                                    const HostNuma& numa, const P2pSelection& selection) {
  std::vector<P2pTest> out;
  if (gpu_count <= 0) return out;
  // Local and host first: they run on one GPU too, and are the cheapest evidence.
  if (selection.device_local) plan_local(gpu_count, selection, out);
  if (selection.host_gpu) plan_host(gpu_count, numa, selection, out);
  if (selection.gpu_gpu) plan_pairs(gpu_count, peer_access, selection, out);
  return out;
}

std::vector<QueueStep> plan_sample_queue(int streams, int copies_per_sample) {
  using K = QueueStep::Kind;
  std::vector<QueueStep> steps;
  const auto per_stream = static_cast<std::size_t>(3 + std::max(copies_per_sample, 0));
  steps.reserve(static_cast<std::size_t>(std::max(streams, 0)) * per_stream + 1);
  for (int s = 0; s < streams; ++s)
    steps.push_back({K::kSpin, s});
  for (int s = 0; s < streams; ++s)
    steps.push_back({K::kStart, s});
  for (int c = 0; c < copies_per_sample; ++c) {
    for (int s = 0; s < streams; ++s)
      steps.push_back({K::kCopy, s});
  }
  for (int s = 0; s < streams; ++s)
    steps.push_back({K::kStop, s});
  if (streams > 0) steps.push_back({K::kRelease, -1});
  return steps;
}

std::vector<std::uint32_t> pointer_chase_cycle(std::uint32_t slots, std::uint64_t seed) {
  std::vector<std::uint32_t> order(slots);
  std::iota(order.begin(), order.end(), 0U);
  std::mt19937_64 random(seed);
  // Sattolo: swapping only with earlier positions makes one cycle of the whole permutation.
  for (std::uint32_t i = slots; i > 1; --i) {
    std::uniform_int_distribution<std::uint32_t> pick(0, i - 2);
    std::swap(order[i - 1], order[pick(random)]);
  }
  return order;
}

std::vector<int> online_numa_nodes(const std::filesystem::path& sysfs_root) {
  const auto text = read_first_line(sysfs_root / "devices/system/node/online");
  if (!text || text->empty()) return {};
  try {
    return parse_cpu_list(*text);
  } catch (const std::invalid_argument&) {
    return {};
  }
}

P2pMeasurement p2p_measurement(P2pMethod method, std::uint64_t bytes, int copies_per_sample,
                               int warmup, std::vector<double> samples_s) {
  if (samples_s.empty()) throw std::invalid_argument("p2p measurement without samples");
  P2pMeasurement m;
  m.bytes = bytes;
  m.copies_per_sample = copies_per_sample;
  m.iterations = static_cast<int>(samples_s.size());
  m.warmup = warmup;
  const double middle = median(samples_s);
  if (method == P2pMethod::kPointerChase) {
    m.latency_s = middle / copies_per_sample;
  } else if (middle > 0) {
    m.bytes_per_s = static_cast<double>(bytes) * copies_per_sample / middle;
  }
  m.samples_s = std::move(samples_s);
  return m;
}

P2pRecord p2p_record(RecordOrigin origin, const P2pTest& test, std::size_t stream,
                     const std::vector<GpuIdentity>& gpus, P2pStreamResult result) {
  const auto gpu_at = [&](std::optional<int> position) -> std::optional<GpuIdentity> {
    if (!position || static_cast<std::size_t>(*position) >= gpus.size()) return std::nullopt;
    return gpus[static_cast<std::size_t>(*position)];
  };
  const auto index_at = [&](std::optional<int> position) -> std::optional<int> {
    const auto gpu = gpu_at(position);
    return gpu ? std::optional<int>(gpu->index) : std::nullopt;
  };
  P2pRecord r;
  r.path = std::string(name_of(test.path));
  if (test.method) r.method = std::string(name_of(*test.method));
  if (test.access) r.access = std::string(name_of(*test.access));
  r.bidirectional = test.bidirectional;
  r.host_numa_local = test.host_numa_local;
  r.peer_access = test.peer_access;
  if (stream < test.streams.size()) {
    const P2pStream& s = test.streams[stream];
    origin.gpu = gpu_at(s.device);
    r.src_gpu = index_at(s.src.gpu);
    r.dst_gpu = index_at(s.dst.gpu);
    if (s.src.is_host()) r.host_numa_node = s.src.numa_node;
    if (s.dst.is_host()) r.host_numa_node = s.dst.numa_node;
  } else {
    origin.gpu = gpu_at(test.skipped_src);
    r.src_gpu = index_at(test.skipped_src);
    r.dst_gpu = index_at(test.skipped_dst);
  }
  r.origin = std::move(origin);
  r.status = result.status;
  if (!result.reason.empty()) r.reason = std::move(result.reason);
  r.measurement = std::move(result.measurement);
  return r;
}

}  // namespace commcert
