// libFuzzer target: any bytes as Slurm's topology.conf (or `scontrol show topology`), as
// ibnetdiscover's output, and as a hostlist (scripts/fuzz). Each reader must accept the input or
// refuse it with a UsageError, never crash, hang or read out of bounds; what it accepts must
// answer the model's questions consistently (a broken promise traps, which libFuzzer reports).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/errors.hpp"
#include "topology/hostlist.hpp"
#include "topology/ibnetdiscover.hpp"
#include "topology/slurm_topology.hpp"

namespace {

constexpr std::size_t kNameLimit = 4096;

void require(bool promise) {
  if (!promise) __builtin_trap();
}

// A few hosts' leaves and a few paths: a path starts and ends where asked, and every hop holds
// at least one switch.
void ask(const commcert::Topology& topology) {
  std::size_t asked = 0;
  for (const std::string& node : topology.node_names()) {
    if (++asked > 16) break;
    const auto leaves = topology.leaves_of(node);
    require(!leaves.empty());
    require(topology.leaf_of(node).has_value() == (leaves.size() == 1));
    for (const std::string& leaf : leaves)
      require(topology.find_switch(leaf) != nullptr);
  }
  const auto& switches = topology.switches();
  for (std::size_t i = 0; i < switches.size() && i < 8; ++i) {
    const std::string& from = switches[i].name;
    const std::string& to = switches[switches.size() - 1 - i].name;
    const auto path = topology.path_between(from, to);
    if (!path) continue;
    require(path->hops.front() == std::vector<std::string>{from});
    require(path->hops.back() == std::vector<std::string>{to});
    for (const auto& hop : path->hops)
      require(!hop.empty());
    require(!path->lowest_common.empty());
  }
}

template <typename Read>
void read_and_ask(Read read) {
  try {
    ask(read());
  } catch (const commcert::UsageError&) {
    // refused with a message: what a reader must do with bad input
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // The hostlists' bound made small, as below: a file of a million names is legal, and takes
  // longer than the timeout under sanitizers (about a second without).
  read_and_ask([&] { return commcert::parse_slurm_topology(text, "topology.conf", kNameLimit); });
  read_and_ask([&] { return commcert::parse_ibnetdiscover(text, "ibnetdiscover.txt"); });
  try {
    // A smaller bound than a file's: the fuzzer should spend its time on shapes, not on
    // making a million names.
    const auto names =
        commcert::expand_hostlist(text.substr(0, text.find('\n')), "hostlist", kNameLimit);
    require(!names.empty() && names.size() <= kNameLimit);
  } catch (const commcert::UsageError&) {
  }
  return 0;
}
