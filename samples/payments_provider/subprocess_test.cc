// reckon::testing::Subprocess (tests/support/subprocess.h), exercised with /bin/sh. It lives
// here until tests/CMakeLists.txt gives the support library a test target of its own.
#include "tests/support/subprocess.h"

#include <gtest/gtest.h>

#include <csignal>

namespace reckon::testing {
namespace {

using namespace std::chrono_literals;

Subprocess Shell(const std::string& script, SubprocessOptions options = {}) {
  options.args = {"-c", script};
  Result<Subprocess> started = Subprocess::Start("/bin/sh", std::move(options));
  if (!started) throw std::runtime_error(started.error().ToString());
  return std::move(started).value();
}

TEST(Subprocess, ReadsLinesAndExitCode) {
  SubprocessOptions options;
  options.env = {{"RECKON_GREETING", "hello"}};
  Subprocess child = Shell("echo \"$RECKON_GREETING\"; printf 'two\\nlast'; exit 3", options);
  EXPECT_EQ(child.ReadLine(5s).value(), "hello");
  EXPECT_EQ(child.ReadLine(5s).value(), "two");
  EXPECT_EQ(child.ReadLine(5s).value(), "last");
  Result<std::string> eof = child.ReadLine(5s);
  ASSERT_FALSE(eof);
  EXPECT_EQ(eof.error().code(), Errc::kFailedPrecondition);
  ExitStatus status = child.Wait().value();
  EXPECT_EQ(status, (ExitStatus{true, 3, 0}));
  EXPECT_EQ(status.ToString(), "exited with code 3");
  EXPECT_EQ(child.Wait().value(), status);  // cached
  EXPECT_FALSE(child.running());
}

TEST(Subprocess, ReadLineTimesOutAndKeepsThePartialLine) {
  Subprocess child = Shell("printf 'par'; sleep 0.3; echo tial; exec sleep 30");
  Result<std::string> early = child.ReadLine(50ms);
  ASSERT_FALSE(early);
  EXPECT_EQ(early.error().code(), Errc::kDeadlineExceeded);
  EXPECT_EQ(child.ReadLine(5s).value(), "partial");
  ASSERT_TRUE(child.Kill(SIGKILL));
  EXPECT_TRUE(child.Wait().value().KilledBy(SIGKILL));
  EXPECT_FALSE(child.Kill(SIGKILL));  // already reaped
}

TEST(Subprocess, TerminateEscalatesToSigkill) {
  Subprocess polite = Shell("exec sleep 30");
  EXPECT_TRUE(polite.Terminate(5s).value().KilledBy(SIGTERM));
  Subprocess stubborn = Shell("trap '' TERM; echo ready; while :; do sleep 0.05; done");
  ASSERT_EQ(stubborn.ReadLine(5s).value(), "ready");
  EXPECT_TRUE(stubborn.Terminate(200ms).value().KilledBy(SIGKILL));
}

TEST(Subprocess, WaitForAndReadAll) {
  Subprocess child = Shell("sleep 0.2; echo a; echo b");
  EXPECT_EQ(child.WaitFor(10ms).error().code(), Errc::kDeadlineExceeded);
  EXPECT_EQ(child.ReadAll(5s).value(), "a\nb\n");
  EXPECT_TRUE(child.WaitFor(5s).value().Succeeded());
}

TEST(Subprocess, MissingExecutableIsNotFound) {
  Result<Subprocess> missing = Subprocess::Start("/nonexistent/reckon-binary");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), Errc::kNotFound);
  EXPECT_NE(missing.error().message().find("No such file"), std::string::npos)
      << missing.error().message();
}

TEST(Subprocess, DestructorKillsAndMoveTransfersOwnership) {
  pid_t pid = 0;
  {
    Subprocess child = Shell("exec sleep 30");
    pid = child.pid();
    Subprocess moved = std::move(child);
    EXPECT_EQ(moved.pid(), pid);
    EXPECT_TRUE(moved.running());
  }
  EXPECT_NE(::kill(pid, 0), 0);  // reaped: the pid is gone
}

}  // namespace
}  // namespace reckon::testing
