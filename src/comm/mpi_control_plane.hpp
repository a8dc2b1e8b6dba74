#pragma once

#include <string>
#include <vector>

#include <mpi.h>

#include "comm/control_plane.hpp"

namespace commcert {

// Control plane over MPI. Uses its own duplicates of MPI_COMM_WORLD so its messages never match
// the data plane's, and a separate one for watchdog notices (point-to-point, non-blocking).
class MpiControlPlane final : public ControlPlane {
 public:
  explicit MpiControlPlane(bool thread_multiple);
  ~MpiControlPlane() override;

  [[nodiscard]] int process_index() const override { return rank_; }
  [[nodiscard]] int process_count() const override { return size_; }
  std::vector<std::string> all_gather(const std::string& mine) override;
  std::string broadcast_from_root(const std::string& value) override;
  void all_reduce_max(std::span<double> values) override;
  std::vector<std::vector<double>> gather_to_root(std::span<const double> mine) override;
  void barrier() override;
  [[nodiscard]] bool has_side_channel() const override { return thread_multiple_; }
  void post_notice(std::span<const std::int64_t> payload) override;
  std::optional<WatchdogNotice> poll_notice() override;
  void post_failure(const std::string& text) override;
  std::optional<std::string> poll_failure() override;
  [[noreturn]] void abort_job(int exit_code) noexcept override;

 private:
  MPI_Comm control_ = MPI_COMM_NULL;
  MPI_Comm notices_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  bool thread_multiple_ = false;
  std::vector<std::int64_t> posted_payload_;  // kept alive until the sends complete
  std::vector<MPI_Request> posted_;
  std::string posted_failure_;  // kept alive until the job ends
};

}  // namespace commcert
