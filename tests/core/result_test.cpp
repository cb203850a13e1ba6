// Result<T>: value() of an error says what the error was before it aborts (a bare SIGABRT hid
// messages like "did you mean 'Frame'?" from users of the idiom `Channel::find(...).value()`).
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <string>

#include "tactus/core/result.hpp"

using namespace tactus;

namespace {

struct Ended {
  int signal = 0;
  int exitCode = -1;
  std::string stderrText;
};

// Runs `body` in a child whose stderr goes to a pipe; returns the child's signal and stderr.
template <typename Body>
Ended runInChild(Body body) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(fds[1], STDERR_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    std::signal(SIGABRT, SIG_DFL);
    body();
    ::_exit(0);
  }
  ::close(fds[1]);
  Ended ended;
  char buffer[512];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) ended.stderrText.append(buffer, std::size_t(n));
  ::close(fds[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  if (WIFSIGNALED(status)) ended.signal = WTERMSIG(status);
  if (WIFEXITED(status)) ended.exitCode = WEXITSTATUS(status);
  return ended;
}

Result<int> misspelt() {
  return fail(ErrorCode::kNotFound, "the schedule has no channel 'Frmae' (did you mean 'Frame'?)");
}

}  // namespace

TEST_CASE("value() of an error prints the error, then aborts", "[result]") {
  const Ended ended = runInChild([] {
    const int v = misspelt().value();
    (void)v;
  });
  CHECK(ended.signal == SIGABRT);
  CHECK(ended.stderrText.find("(not found): the schedule has no channel 'Frmae' (did you mean 'Frame'?)") !=
        std::string::npos);
  CHECK(ended.stderrText.find("check the Result first") != std::string::npos);
}

TEST_CASE("operator-> and * of an error say the same", "[result]") {
  struct Named {
    int id = 0;
  };
  const Ended arrow = runInChild([] {
    Result<Named> r = fail(ErrorCode::kInvalidState, "outside a runnable");
    (void)r->id;
  });
  CHECK(arrow.signal == SIGABRT);
  CHECK(arrow.stderrText.find("(invalid state): outside a runnable") != std::string::npos);
  const Ended star = runInChild([] {
    const Result<int> r = fail(ErrorCode::kTimeout, "no master within 2 s");
    (void)*r;
  });
  CHECK(star.signal == SIGABRT);
  CHECK(star.stderrText.find("(timeout): no master within 2 s") != std::string::npos);
}

TEST_CASE("value() of a value is the value, and prints nothing", "[result]") {
  const Ended ended = runInChild([] {
    Result<std::string> r = std::string("Frame");
    if (r.value() != "Frame") ::_exit(3);
  });
  CHECK(ended.signal == 0);
  CHECK(ended.exitCode == 0);
  CHECK(ended.stderrText.empty());
}
