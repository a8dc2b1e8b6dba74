#pragma once

#include <memory>
#include <string>

#include "comm/communicator.hpp"
#include "comm/control_plane.hpp"
#include "comm/link_transport.hpp"

namespace commcert {

// MPI for the life of a command, behind an interface that names no MPI type: the MPI code lives
// in a plugin (libcommcert-mpi.so) loaded at run time, so one binary runs under mpirun/srun and
// also on a node that has no MPI library at all (a GPU node checked by itself).
class MpiSession {
 public:
  virtual ~MpiSession() = default;
  [[nodiscard]] virtual int world_rank() const = 0;
  [[nodiscard]] virtual int world_size() const = 0;
  [[nodiscard]] virtual int local_rank() const = 0;  // among the processes on this host
  [[nodiscard]] virtual int local_size() const = 0;
  [[nodiscard]] virtual bool thread_multiple() const = 0;
  [[nodiscard]] virtual std::string library_version() const = 0;
  // Whether this session began MPI and so ends it (MPI_Finalize) when destroyed; a session made
  // while MPI is running (a stage inside `commcert run`) shares it and leaves the end to that one.
  [[nodiscard]] virtual bool ends_mpi() const = 0;
  [[nodiscard]] virtual std::unique_ptr<ControlPlane> make_control_plane() = 0;
  // The host-memory MPI backend; `processes_on_host` share the host's memory.
  [[nodiscard]] virtual std::unique_ptr<Communicator> make_communicator(int processes_on_host) = 0;
  // MPI point-to-point for `links --transport mpi`; every process calls it at once.
  [[nodiscard]] virtual std::unique_ptr<LinkTransport> make_link_transport() = 0;
};

// The plugin's one exported function: begins MPI (MPI_Init_thread) and returns the session.
// Throws RuntimeFailure when MPI cannot start.
using MakeMpiSession = MpiSession* (*)(int* argc, char*** argv);
inline constexpr const char* kMpiPluginEntryPoint = "commcert_make_mpi_session";
using MpiLibraryVersion = const char* (*)();
inline constexpr const char* kMpiPluginVersionEntryPoint = "commcert_mpi_library_version";
inline constexpr const char* kMpiPluginFile = "libcommcert-mpi.so";
inline constexpr const char* kMpiPluginVariable = "COMMCERT_MPI_PLUGIN";

}  // namespace commcert
