#include "core/rank_identity.hpp"

#include <algorithm>

namespace commcert {

Json to_json(const RankIdentity& identity) {
  Json out;
  out["rank"] = identity.rank;
  out["process"] = identity.process;
  out["node"] = identity.node;
  out["hostname"] = identity.hostname;
  out["local_rank"] = identity.local_rank;
  out["pid"] = identity.pid;
  out["device"] = identity.device;
  out["gpu"] = to_json(identity.gpu);
  return out;
}

RankIdentity rank_identity_from_json(const Json& json) {
  RankIdentity identity;
  identity.rank = json.at("rank").get<int>();
  identity.process = json.at("process").get<int>();
  identity.node = json.at("node").get<std::string>();
  identity.hostname = json.at("hostname").get<std::string>();
  identity.local_rank = json.at("local_rank").get<int>();
  identity.pid = json.at("pid").get<int>();
  identity.device = json.at("device").get<std::string>();
  if (const auto& gpu = json.at("gpu"); !gpu.is_null()) {
    GpuIdentity g;
    g.index = gpu.at("index").get<int>();
    g.uuid = gpu.value("uuid", Json(nullptr)).is_string() ? gpu["uuid"].get<std::string>() : "";
    g.pci_bus_id = gpu.value("pci_bus_id", Json(nullptr)).is_string()
                       ? gpu["pci_bus_id"].get<std::string>()
                       : "";
    g.name = gpu.value("name", Json(nullptr)).is_string() ? gpu["name"].get<std::string>() : "";
    identity.gpu = g;
  }
  return identity;
}

Json to_json(const std::vector<RankIdentity>& identities) {
  Json out = Json::array();
  for (const auto& identity : identities)
    out.push_back(to_json(identity));
  return out;
}

std::vector<std::string> distinct_nodes(const std::vector<RankIdentity>& ranks) {
  std::vector<std::string> nodes;
  for (const auto& rank : ranks) {
    if (std::find(nodes.begin(), nodes.end(), rank.node) == nodes.end()) nodes.push_back(rank.node);
  }
  return nodes;
}

}  // namespace commcert
