// The MPI plugin (libcommcert-mpi.so): the only code that links libmpi. Loaded by
// load_mpi_session(); everything else of commcert it uses comes from the executable.
#include <memory>
#include <string>

#include "comm/mpi_communicator.hpp"
#include "comm/mpi_control_plane.hpp"
#include "comm/mpi_link_transport.hpp"
#include "comm/mpi_runtime.hpp"
#include "comm/mpi_session.hpp"

namespace commcert {
namespace {

class PluginMpiSession final : public MpiSession {
 public:
  PluginMpiSession(int* argc, char*** argv) : runtime_(argc, argv) {}

  [[nodiscard]] int world_rank() const override { return runtime_.world_rank(); }
  [[nodiscard]] int world_size() const override { return runtime_.world_size(); }
  [[nodiscard]] int local_rank() const override { return runtime_.local_rank(); }
  [[nodiscard]] int local_size() const override { return runtime_.local_size(); }
  [[nodiscard]] bool thread_multiple() const override { return runtime_.thread_multiple(); }
  [[nodiscard]] std::string library_version() const override {
    return MpiRuntime::library_version();
  }
  [[nodiscard]] bool ends_mpi() const override { return runtime_.owns_initialization(); }
  [[nodiscard]] std::unique_ptr<ControlPlane> make_control_plane() override {
    return std::make_unique<MpiControlPlane>(runtime_.thread_multiple());
  }
  [[nodiscard]] std::unique_ptr<Communicator> make_communicator(int processes_on_host) override {
    return std::make_unique<MpiCommunicator>(processes_on_host);
  }
  [[nodiscard]] std::unique_ptr<LinkTransport> make_link_transport() override {
    return make_mpi_link_transport();
  }

 private:
  MpiRuntime runtime_;
};

}  // namespace
}  // namespace commcert

extern "C" __attribute__((visibility("default"))) commcert::MpiSession* commcert_make_mpi_session(
    int* argc, char*** argv) {
  return new commcert::PluginMpiSession(argc, argv);
}

// MPI_Get_library_version may be called before MPI begins: `commcert --version` reports it
// without starting MPI.
extern "C" __attribute__((visibility("default"))) const char* commcert_mpi_library_version() {
  static const std::string version = commcert::MpiRuntime::library_version();
  return version.c_str();
}
