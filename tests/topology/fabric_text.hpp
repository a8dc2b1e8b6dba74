#pragma once

// A two-level fat tree written as Slurm's topology.conf and as ibnetdiscover's output, for tests
// that need a fabric larger than a fixture: hosts gpu0001.. split evenly over leaf01..,
// every leaf cabled once to every spine1...
#include <cstdint>
#include <string>

#include <fmt/format.h>

namespace commcert::topology_test {

struct FatTree {
  int hosts = 1024;
  int leaves = 32;
  int spines = 4;

  [[nodiscard]] int hosts_per_leaf() const { return hosts / leaves; }
};

inline std::string host_name(int host) {
  return fmt::format("gpu{:04}", host);
}
inline std::string leaf_name(int leaf) {
  return fmt::format("leaf{:02}", leaf);
}
inline std::string spine_name(int spine) {
  return fmt::format("spine{}", spine);
}
// The leaf (1-based) of host `host` (1-based).
inline int leaf_of_host(const FatTree& tree, int host) {
  return (host - 1) / tree.hosts_per_leaf() + 1;
}

inline std::string topology_conf(const FatTree& tree) {
  std::string text = "# generated fat tree\n";
  for (int leaf = 1; leaf <= tree.leaves; ++leaf) {
    const int first = (leaf - 1) * tree.hosts_per_leaf() + 1;
    text += fmt::format("SwitchName={} Nodes=gpu[{:04}-{:04}]\n", leaf_name(leaf), first,
                        first + tree.hosts_per_leaf() - 1);
  }
  for (int spine = 1; spine <= tree.spines; ++spine) {
    text += fmt::format("SwitchName={} Switches=leaf[01-{:02}]\n", spine_name(spine), tree.leaves);
  }
  return text;
}

inline std::uint64_t leaf_guid(int leaf) {
  return 0x0002c90300aa0000ULL + static_cast<std::uint64_t>(leaf);
}
inline std::uint64_t spine_guid(int spine) {
  return 0x0002c90300ff0000ULL + static_cast<std::uint64_t>(spine);
}
inline std::uint64_t hca_guid(int host) {
  return 0x0002c90300d00000ULL + 16 * static_cast<std::uint64_t>(host);
}

// Hosts on a leaf's first ports, spines after them; a spine's port N goes to leaf N.
inline std::string ibnetdiscover_output(const FatTree& tree) {
  std::string text = "#\n# Topology file: generated fat tree\n#\n";
  const int first_uplink = tree.hosts_per_leaf() + 1;
  for (int spine = 1; spine <= tree.spines; ++spine) {
    text +=
        fmt::format("\nvendid=0x2c9\ndevid=0xd2f0\nswitchguid=0x{0:x}({0:x})\n", spine_guid(spine));
    text += fmt::format("Switch\t64 \"S-{:016x}\"\t\t# \"{}\" enhanced port 0 lid {} lmc 0\n",
                        spine_guid(spine), spine_name(spine), spine);
    for (int leaf = 1; leaf <= tree.leaves; ++leaf) {
      text += fmt::format("[{}]\t\"S-{:016x}\"[{}]\t\t# \"{}\" lid {} 4xNDR\n", leaf,
                          leaf_guid(leaf), first_uplink + spine - 1, leaf_name(leaf), 100 + leaf);
    }
  }
  for (int leaf = 1; leaf <= tree.leaves; ++leaf) {
    text +=
        fmt::format("\nvendid=0x2c9\ndevid=0xd2f0\nswitchguid=0x{0:x}({0:x})\n", leaf_guid(leaf));
    text += fmt::format("Switch\t64 \"S-{:016x}\"\t\t# \"{}\" enhanced port 0 lid {} lmc 0\n",
                        leaf_guid(leaf), leaf_name(leaf), 100 + leaf);
    for (int port = 1; port <= tree.hosts_per_leaf(); ++port) {
      const int host = (leaf - 1) * tree.hosts_per_leaf() + port;
      text += fmt::format("[{}]\t\"H-{:016x}\"[1]({:x}) \t\t# \"{} mlx5_0\" lid {} 4xNDR\n", port,
                          hca_guid(host), hca_guid(host) + 1, host_name(host), 1000 + host);
    }
    for (int spine = 1; spine <= tree.spines; ++spine) {
      text +=
          fmt::format("[{}]\t\"S-{:016x}\"[{}]\t\t# \"{}\" lid {} 4xNDR\n",
                      first_uplink + spine - 1, spine_guid(spine), leaf, spine_name(spine), spine);
    }
  }
  for (int host = 1; host <= tree.hosts; ++host) {
    const int leaf = leaf_of_host(tree, host);
    const int port = host - (leaf - 1) * tree.hosts_per_leaf();
    text += fmt::format("\nvendid=0x2c9\ndevid=0x1021\ncaguid=0x{:x}\n", hca_guid(host));
    text +=
        fmt::format("Ca\t1 \"H-{:016x}\"\t\t# \"{} mlx5_0\"\n", hca_guid(host), host_name(host));
    text += fmt::format("[1]({:x}) \t\"S-{:016x}\"[{}]\t\t# lid {} lmc 0 \"{}\" lid {} 4xNDR\n",
                        hca_guid(host) + 1, leaf_guid(leaf), port, 1000 + host, leaf_name(leaf),
                        100 + leaf);
  }
  return text;
}

}  // namespace commcert::topology_test
