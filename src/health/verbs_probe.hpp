#pragma once

#include <string>
#include <vector>

#include "core/json.hpp"

namespace commcert {

// What libibverbs can open, next to what sysfs shows: a NIC in sysfs that verbs cannot list
// (no user-space provider, no rdma-core) is one NCCL cannot use either.
struct VerbsProbe {
  bool built = false;                // this build links libibverbs
  std::vector<std::string> devices;  // ibv_get_device_list names
  std::string error;                 // why the list is empty, when verbs said so
};

// Never throws. ibv_get_device_list returning NULL (a kernel without RDMA support answers
// ENOSYS) is zero devices with `error` set.
[[nodiscard]] VerbsProbe probe_verbs();

// The node record's `verbs` object; null when the build has no libibverbs.
[[nodiscard]] Json verbs_json(const VerbsProbe& probe);

}  // namespace commcert
