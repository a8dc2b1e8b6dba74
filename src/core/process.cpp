#include "core/process.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/clock.hpp"

namespace commcert {
namespace {

void close_quietly(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, double timeout_seconds) {
  ProcessResult result;
  if (argv.empty()) {
    result.error = "empty command";
    return result;
  }
  int out_pipe[2] = {-1, -1};
  int err_pipe[2] = {-1, -1};
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    result.error = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& arg : argv)
    args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid < 0) {
    result.error = std::string("fork: ") + std::strerror(errno);
    return result;
  }
  if (pid == 0) {
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(err_pipe[1], STDERR_FILENO);
    ::execvp(args[0], args.data());
    const std::string message =
        std::string("cannot run ") + argv[0] + ": " + std::strerror(errno) + "\n";
    (void)!::write(STDERR_FILENO, message.data(), message.size());
    ::_exit(127);
  }
  close_quietly(out_pipe[1]);
  close_quietly(err_pipe[1]);

  const Deadline deadline = Deadline::after_seconds(timeout_seconds);
  int fds[2] = {out_pipe[0], err_pipe[0]};
  std::string* sinks[2] = {&result.output, &result.error};
  while (fds[0] >= 0 || fds[1] >= 0) {
    pollfd polled[2];
    nfds_t count = 0;
    int which[2];
    for (int i = 0; i < 2; ++i) {
      if (fds[i] >= 0) {
        polled[count] = {fds[i], POLLIN, 0};
        which[count++] = i;
      }
    }
    const double remaining = deadline.remaining_seconds();
    if (remaining <= 0) {
      result.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    const int wait_ms = remaining > 1e6 ? -1 : static_cast<int>(remaining * 1000) + 1;
    if (::poll(polled, count, wait_ms) < 0 && errno != EINTR) break;
    for (nfds_t i = 0; i < count; ++i) {
      if (!(polled[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buffer[4096];
      const ssize_t got = ::read(polled[i].fd, buffer, sizeof buffer);
      if (got > 0) {
        sinks[which[i]]->append(buffer, static_cast<std::size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        close_quietly(fds[which[i]]);
      }
    }
  }
  close_quietly(fds[0]);
  close_quietly(fds[1]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = !result.timed_out && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace commcert
