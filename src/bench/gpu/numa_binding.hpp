#pragma once

#include <filesystem>
#include <optional>
#include <sched.h>

#include "health/pci_address.hpp"

namespace commcert {

// Binds the calling thread to a NUMA node's CPUs for its lifetime, then restores its mask. Pages
// of pinned host memory go where the allocating thread runs, so host buffers are allocated (and
// copied from) under one, as nvbandwidth does.
class NumaBinding {
 public:
  NumaBinding(const std::filesystem::path& sysfs_root, std::optional<int> node) {
    if (!node) return;
    const auto cpus = numa_node_cpus(sysfs_root, *node);
    if (cpus.empty() || sched_getaffinity(0, sizeof(saved_), &saved_) != 0) return;
    cpu_set_t mask;
    CPU_ZERO(&mask);
    for (const int cpu : cpus) {
      if (cpu < CPU_SETSIZE) CPU_SET(cpu, &mask);
    }
    bound_ = sched_setaffinity(0, sizeof(mask), &mask) == 0;
  }
  ~NumaBinding() {
    if (bound_) sched_setaffinity(0, sizeof(saved_), &saved_);
  }
  NumaBinding(const NumaBinding&) = delete;
  NumaBinding& operator=(const NumaBinding&) = delete;

  // Whether the thread now runs on the node's CPUs.
  [[nodiscard]] bool bound() const { return bound_; }

 private:
  cpu_set_t saved_{};
  bool bound_ = false;
};

}  // namespace commcert
