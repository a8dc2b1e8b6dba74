#pragma once

#include <memory>

#include "comm/link_transport.hpp"

namespace commcert {

// Link tests over MPI point-to-point on host memory: the schedule, records and validator of
// `links` run on any machine with MPI (docs/links.md). Created by every process at once (it
// duplicates MPI_COMM_WORLD); peers are world ranks.
[[nodiscard]] std::unique_ptr<LinkTransport> make_mpi_link_transport();

}  // namespace commcert
