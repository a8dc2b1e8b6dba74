#pragma once

#include <string>

#include <mpi.h>

#include "core/api_error.hpp"

namespace commcert {

// Throws ApiFailure naming the call as written, its file:line, the error text and this rank.
// Called through COMMCERT_CHECK_MPI, never with a hand-typed call name.
void check_mpi(int result, const CallSite& site);

// MPI_Init_thread / MPI_Finalize for the lifetime of a command. Asks for MPI_THREAD_MULTIPLE so
// the watchdog thread can talk to peers while the main thread is blocked in a collective.
// `commcert run` holds one for the whole job and runs its stages inside it: a runtime created
// while MPI is already initialized shares it and leaves MPI_Finalize to the one that began it
// (MPI can be initialized only once per process).
class MpiRuntime {
 public:
  MpiRuntime(int* argc, char*** argv);
  ~MpiRuntime();
  MpiRuntime(const MpiRuntime&) = delete;
  MpiRuntime& operator=(const MpiRuntime&) = delete;

  [[nodiscard]] int world_rank() const { return world_rank_; }
  [[nodiscard]] int world_size() const { return world_size_; }
  // Index of this process among the processes on the same host (shared-memory domain).
  [[nodiscard]] int local_rank() const { return local_rank_; }
  [[nodiscard]] int local_size() const { return local_size_; }
  [[nodiscard]] bool thread_multiple() const { return thread_multiple_; }
  // Whether this runtime began MPI, and so calls MPI_Finalize when destroyed.
  [[nodiscard]] bool owns_initialization() const { return owns_initialization_; }
  [[nodiscard]] static std::string library_version();

 private:
  int world_rank_ = 0;
  int world_size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
  bool thread_multiple_ = false;
  bool owns_initialization_ = false;
};

}  // namespace commcert

#define COMMCERT_CHECK_MPI(expression) \
  ::commcert::check_mpi((expression), COMMCERT_CALL_SITE(expression))
