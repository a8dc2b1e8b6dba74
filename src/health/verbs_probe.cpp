#include "health/verbs_probe.hpp"

namespace commcert {

Json verbs_json(const VerbsProbe& probe) {
  if (!probe.built) return nullptr;
  return {{"devices", probe.devices},
          {"error", probe.error.empty() ? Json(nullptr) : Json(probe.error)}};
}

}  // namespace commcert
