#include "core/errors.hpp"
#include "links/verbs_link_transport.hpp"

namespace commcert {

std::unique_ptr<VerbsLinkTransport> make_verbs_link_transport(const VerbsTransportOptions&) {
  throw RuntimeFailure("this build has no libibverbs (configured without verbs)");
}

}  // namespace commcert
