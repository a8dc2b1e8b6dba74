#include "comm/mpi_control_plane.hpp"

#include <chrono>
#include <cstdio>
#include <numeric>
#include <thread>

#include "comm/mpi_runtime.hpp"

namespace commcert {
namespace {

constexpr int kNoticeTag = 7001;
constexpr int kFailureTag = 7002;
// How long a failure notice may take to leave this process (it is small: sent eagerly).
constexpr auto kFailureSendWait = std::chrono::seconds(1);
constexpr auto kAbortGrace = std::chrono::seconds(10);

}  // namespace

MpiControlPlane::MpiControlPlane(bool thread_multiple) : thread_multiple_(thread_multiple) {
  COMMCERT_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &control_));
  COMMCERT_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &notices_));
  MPI_Comm_set_errhandler(control_, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(notices_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(control_, &rank_);
  MPI_Comm_size(control_, &size_);
}

MpiControlPlane::~MpiControlPlane() {
  for (auto& request : posted_) {
    if (request != MPI_REQUEST_NULL) {
      MPI_Cancel(&request);
      MPI_Request_free(&request);
    }
  }
  MPI_Comm_free(&notices_);
  MPI_Comm_free(&control_);
}

std::vector<std::string> MpiControlPlane::all_gather(const std::string& mine) {
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(size_));
  COMMCERT_CHECK_MPI(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, control_));
  std::vector<int> offsets(lengths.size(), 0);
  std::exclusive_scan(lengths.begin(), lengths.end(), offsets.begin(), 0);
  std::string all(static_cast<std::size_t>(offsets.back() + lengths.back()), '\0');
  COMMCERT_CHECK_MPI(MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(),
                                    offsets.data(), MPI_CHAR, control_));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    out.push_back(
        all.substr(static_cast<std::size_t>(offsets[i]), static_cast<std::size_t>(lengths[i])));
  }
  return out;
}

std::string MpiControlPlane::broadcast_from_root(const std::string& value) {
  int length = static_cast<int>(value.size());
  COMMCERT_CHECK_MPI(MPI_Bcast(&length, 1, MPI_INT, 0, control_));
  std::string out = rank_ == 0 ? value : std::string(static_cast<std::size_t>(length), '\0');
  COMMCERT_CHECK_MPI(MPI_Bcast(out.data(), length, MPI_CHAR, 0, control_));
  return out;
}

void MpiControlPlane::all_reduce_max(std::span<double> values) {
  COMMCERT_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()),
                                   MPI_DOUBLE, MPI_MAX, control_));
}

std::vector<std::vector<double>> MpiControlPlane::gather_to_root(std::span<const double> mine) {
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(rank_ == 0 ? static_cast<std::size_t>(size_) : 0);
  COMMCERT_CHECK_MPI(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, control_));
  std::vector<int> offsets(lengths.size(), 0);
  std::vector<double> all;
  if (rank_ == 0) {
    std::exclusive_scan(lengths.begin(), lengths.end(), offsets.begin(), 0);
    all.resize(static_cast<std::size_t>(offsets.back() + lengths.back()));
  }
  COMMCERT_CHECK_MPI(MPI_Gatherv(mine.data(), length, MPI_DOUBLE, all.data(), lengths.data(),
                                 offsets.data(), MPI_DOUBLE, 0, control_));
  std::vector<std::vector<double>> out;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    const auto first = all.begin() + offsets[i];
    out.emplace_back(first, first + lengths[i]);
  }
  return out;
}

void MpiControlPlane::barrier() {
  COMMCERT_CHECK_MPI(MPI_Barrier(control_));
}

void MpiControlPlane::post_notice(std::span<const std::int64_t> payload) {
  posted_payload_.assign(payload.begin(), payload.end());
  for (int peer = 0; peer < size_; ++peer) {
    if (peer == rank_) continue;
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Isend(posted_payload_.data(), static_cast<int>(posted_payload_.size()), MPI_INT64_T, peer,
              kNoticeTag, notices_, &request);
    posted_.push_back(request);
  }
}

std::optional<WatchdogNotice> MpiControlPlane::poll_notice() {
  int ready = 0;
  MPI_Status status;
  if (MPI_Iprobe(MPI_ANY_SOURCE, kNoticeTag, notices_, &ready, &status) != MPI_SUCCESS || !ready) {
    return std::nullopt;
  }
  int count = 0;
  MPI_Get_count(&status, MPI_INT64_T, &count);
  WatchdogNotice notice;
  notice.from_process = status.MPI_SOURCE;
  notice.payload.resize(static_cast<std::size_t>(count));
  MPI_Recv(notice.payload.data(), count, MPI_INT64_T, status.MPI_SOURCE, kNoticeTag, notices_,
           MPI_STATUS_IGNORE);
  return notice;
}

void MpiControlPlane::post_failure(const std::string& text) {
  if (!thread_multiple_ || rank_ == 0) return;
  posted_failure_ = text;
  MPI_Request request = MPI_REQUEST_NULL;
  if (MPI_Isend(posted_failure_.data(), static_cast<int>(posted_failure_.size()), MPI_CHAR, 0,
                kFailureTag, notices_, &request) != MPI_SUCCESS) {
    return;
  }
  // Drive the send for a moment: a peer that receives nothing is a process that cannot record.
  const auto until = std::chrono::steady_clock::now() + kFailureSendWait;
  int done = 0;
  while (!done && std::chrono::steady_clock::now() < until) {
    if (MPI_Test(&request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return;
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!done) posted_.push_back(request);  // cancelled with the others when this plane closes
}

std::optional<std::string> MpiControlPlane::poll_failure() {
  int ready = 0;
  MPI_Status status;
  if (MPI_Iprobe(MPI_ANY_SOURCE, kFailureTag, notices_, &ready, &status) != MPI_SUCCESS || !ready) {
    return std::nullopt;
  }
  int count = 0;
  MPI_Get_count(&status, MPI_CHAR, &count);
  std::string text(static_cast<std::size_t>(count), '\0');
  MPI_Recv(text.data(), count, MPI_CHAR, status.MPI_SOURCE, kFailureTag, notices_,
           MPI_STATUS_IGNORE);
  return text;
}

void MpiControlPlane::abort_job(int exit_code) noexcept {
  std::fflush(nullptr);
  // MPI_Abort asks the launcher to end every process; with the launcher gone (a killed srun
  // step, a lost slurmd) it can wait for ever. This process ends regardless.
  try {
    std::thread([exit_code] {
      std::this_thread::sleep_for(kAbortGrace);
      std::fputs("commcert: MPI_Abort did not end the job; exiting this process\n", stderr);
      std::_Exit(exit_code);
    }).detach();
  } catch (...) {
    std::_Exit(exit_code);  // no thread for the fallback: do not risk waiting for ever
  }
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);
}

}  // namespace commcert
