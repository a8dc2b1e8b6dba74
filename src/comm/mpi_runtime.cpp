#include "comm/mpi_runtime.hpp"

#include <cstring>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/node_identity.hpp"

namespace commcert {

void check_mpi(int result, const CallSite& site) {
  if (result == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(result, text, &length);
  ApiError error;
  error.api = "MPI";
  error.call = site.expression;
  error.where = source_location(site);
  error.code = result;
  error.code_name = std::to_string(result);
  error.text = std::string(text, static_cast<std::size_t>(length));
  error.host = local_hostname();
  int initialized = 0;
  MPI_Initialized(&initialized);
  int rank = -1;
  if (initialized && MPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS) error.rank = rank;
  throw ApiFailure(std::move(error));
}

MpiRuntime::MpiRuntime(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  int provided = MPI_THREAD_SINGLE;
  if (initialized) {
    MPI_Query_thread(&provided);
  } else {
    COMMCERT_CHECK_MPI(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided));
    owns_initialization_ = true;
  }
  thread_multiple_ = provided >= MPI_THREAD_MULTIPLE;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  COMMCERT_CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank_));
  COMMCERT_CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &world_size_));
  MPI_Comm host_comm = MPI_COMM_NULL;
  COMMCERT_CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank_,
                                         MPI_INFO_NULL, &host_comm));
  MPI_Comm_rank(host_comm, &local_rank_);
  MPI_Comm_size(host_comm, &local_size_);
  MPI_Comm_free(&host_comm);
}

MpiRuntime::~MpiRuntime() {
  if (!owns_initialization_) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

std::string MpiRuntime::library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, strnlen(text, static_cast<std::size_t>(length)));
  // Keep the first line, and of Open MPI's "Open MPI v4.1.4, package: ..." the name and version.
  version = version.substr(0, version.find_first_of("\r\n"));
  return version.substr(0, version.find(", package"));
}

}  // namespace commcert
