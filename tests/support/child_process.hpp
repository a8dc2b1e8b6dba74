#pragma once

#include <functional>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace commcert::test_support {

// Runs `body` in a forked child and returns what it returned. A library is loaded once per
// process (dlopen matches an already loaded file), so every test that loads one for real runs
// in a process of its own.
inline std::string run_in_child(const std::function<std::string()>& body) {
  int pipe_ends[2];
  if (::pipe(pipe_ends) != 0) return "pipe failed";
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(pipe_ends[0]);
    const std::string result = body();
    const ssize_t written = ::write(pipe_ends[1], result.data(), result.size());
    ::_exit(written == static_cast<ssize_t>(result.size()) ? 0 : 1);
  }
  ::close(pipe_ends[1]);
  std::string result;
  char buffer[4096];
  for (ssize_t got; (got = ::read(pipe_ends[0], buffer, sizeof buffer)) > 0;)
    result.append(buffer, static_cast<std::size_t>(got));
  ::close(pipe_ends[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "child failed: " + result;
  return result;
}

}  // namespace commcert::test_support
