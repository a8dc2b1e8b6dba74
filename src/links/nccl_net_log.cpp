#include "links/nccl_net_log.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace commcert {
namespace {

constexpr std::string_view kInfo = "NCCL INFO ";

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.back() == '\r' || text.back() == ' '))
    text.remove_suffix(1);
  return text;
}

// " [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB ib0:10.0.0.1<0>" -> {"mlx5_0:1/IB", ...}
std::vector<std::string> ib_devices_of(std::string_view list) {
  std::vector<std::string> out;
  const auto end = list.find(';');
  list = list.substr(0, end);
  std::size_t at = 0;
  while ((at = list.find('[', at)) != std::string_view::npos) {
    const auto close = list.find(']', at);
    if (close == std::string_view::npos) break;
    const std::string_view index = list.substr(at + 1, close - at - 1);
    const bool numeric = !index.empty() && std::all_of(index.begin(), index.end(),
                                                       [](char c) { return c >= '0' && c <= '9'; });
    const auto stop = std::min(list.find(' ', close), list.size());
    if (numeric) out.emplace_back(list.substr(close + 1, stop - close - 1));
    at = close + 1;
  }
  return out;
}

void read_message(std::string_view message, std::string_view line, NcclNetChoice& out) {
  constexpr std::string_view kUsingNetwork = "Using network ";
  constexpr std::string_view kIbUsing = "NET/IB : Using";
  constexpr std::string_view kGdr = " : GPU Direct RDMA ";
  if (message.starts_with(kUsingNetwork)) {
    out.network = std::string(trim(message.substr(kUsingNetwork.size())));
    if (out.network_line.empty()) out.network_line = std::string(line);
  } else if (message.starts_with("NET/IB : No device found")) {
    out.ib_no_device = true;
  } else if (message.starts_with(kIbUsing)) {
    out.ib_devices = ib_devices_of(message.substr(kIbUsing.size()));
  } else if (const auto gdr = message.find(kGdr);
             message.starts_with("NET/") && gdr != std::string_view::npos) {
    const std::string_view rest = message.substr(gdr + kGdr.size());
    const bool enabled = rest.starts_with("Enabled");
    const auto open = rest.find('\'');
    const auto close = rest.rfind('\'');
    if (open != std::string_view::npos && close > open) {
      out.gdr_by_hca[std::string(rest.substr(open + 1, close - open - 1))] = enabled;
    }
    if (!enabled && out.staging_line.empty()) out.staging_line = std::string(line);
  } else if (message.starts_with("Channel ") &&
             message.find("[send] via NET/") != std::string_view::npos) {
    const std::string_view via = message.substr(message.find("via NET/") + 8);
    ++out.net_send_channels;
    const bool uses_gdr = via.find("/GDRDMA") != std::string_view::npos;
    if (uses_gdr) {
      ++out.gdr_send_channels;
    } else if (out.staging_line.empty()) {
      out.staging_line = std::string(line);
    }
    // "IB/0/GDRDMA" or "IB/0(3)/GDRDMA" -> "IB/0"
    const auto slash = via.find('/');
    if (slash != std::string_view::npos) {
      const auto end = via.find_first_of("/( ", slash + 1);
      std::string device(via.substr(0, std::min(end, via.size())));
      if (std::find(out.net_devices.begin(), out.net_devices.end(), device) ==
          out.net_devices.end()) {
        out.net_devices.push_back(std::move(device));
      }
    }
  }
}

}  // namespace

NcclNetChoice parse_nccl_net_log(std::string_view text) {
  NcclNetChoice out;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = std::min(text.find('\n', start), text.size());
    const std::string_view line = trim(text.substr(start, end - start));
    start = end + 1;
    const auto info = line.find(kInfo);
    if (info == std::string_view::npos) continue;
    read_message(line.substr(info + kInfo.size()), line, out);
  }
  return out;
}

std::optional<std::string> nccl_net_problem(const NcclNetChoice& choice) {
  if (!choice.network) return std::string("no \"Using network\" line: not an NCCL_DEBUG=INFO log");
  if (*choice.network == "Socket") {
    return fmt::format("NCCL uses sockets, not RDMA{}: {}",
                       choice.ib_no_device ? " (NET/IB found no device)" : "", choice.network_line);
  }
  if (!choice.staging_line.empty()) {
    return fmt::format("NCCL stages network traffic through host memory (no GPU Direct RDMA): {}",
                       choice.staging_line);
  }
  return std::nullopt;
}

}  // namespace commcert
