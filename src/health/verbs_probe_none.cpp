#include "health/verbs_probe.hpp"

namespace commcert {

VerbsProbe probe_verbs() {
  return {};
}

}  // namespace commcert
