// Subprocess: a child process for tests (crash tests, multi-process tests), started with
// fork/exec, its stdout captured through a pipe.
//
// Ownership: a Subprocess owns the child and the read end of its stdout pipe. It is movable,
// not copyable. The destructor SIGKILLs a child that is still running and reaps it, so a
// failing test never leaks a process (and, with kill_with_parent, neither does a test binary
// that dies).
//
// The child: argv[0] is `path` (executed as given, no PATH search), stdin is /dev/null,
// stdout is a pipe read with ReadLine/ReadAll, stderr is the test's own stderr unless
// SubprocessOptions::stderr_path names a file. The parent's environment is inherited with
// SubprocessOptions::env added on top (same name: the new value wins). Signal dispositions and
// the signal mask are reset to their defaults. The pipe holds about 64 KiB: a child that
// writes more to stdout blocks until the test reads it.
//
// Not thread-safe: use one Subprocess from one thread at a time. Status values are not
// cached across objects; Wait() reaps the child exactly once and remembers the result.
#pragma once

#include <sys/types.h>

#include <csignal>
#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "reckon/base/error.h"

namespace reckon::testing {

struct SubprocessOptions {
  std::vector<std::string> args;  // argv[1...]
  std::vector<std::pair<std::string, std::string>> env;  // added to the inherited environment
  std::string stderr_path;  // empty: inherit; else the child's stderr is appended to this file
  // Linux PR_SET_PDEATHSIG: the child gets SIGKILL when the thread that started it ends.
  // Start from a thread that outlives the child (the test's main thread is fine).
  bool kill_with_parent = true;
};

// How a child ended: exited with a code, or killed by a signal.
struct ExitStatus {
  bool exited = false;  // true: `code` is valid; false: `signal` is valid
  int code = 0;
  int signal = 0;

  bool Succeeded() const { return exited && code == 0; }
  bool KilledBy(int sig) const { return !exited && signal == sig; }
  std::string ToString() const;  // "exited with code 0", "killed by signal 9 (Killed)"

  friend bool operator==(const ExitStatus&, const ExitStatus&) = default;
};

class Subprocess {
 public:
  // Starts `path`. Fails with kNotFound if it cannot be executed (missing, not executable:
  // the exec error is reported back from the child), kUnavailable if pipe/fork fail.
  static Result<Subprocess> Start(const std::string& path, SubprocessOptions options = {});

  Subprocess(Subprocess&& other) noexcept;
  Subprocess& operator=(Subprocess&& other) noexcept;
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;
  ~Subprocess();  // SIGKILL if still running, then reap; closes the pipe

  pid_t pid() const { return pid_; }

  // The next line of the child's stdout, without its '\n', waiting at most `timeout`.
  // kDeadlineExceeded if no complete line arrived in time (what was read is kept for the
  // next call); kFailedPrecondition once stdout is closed and every line was returned (a final
  // line without '\n' is returned as a line first).
  Result<std::string> ReadLine(std::chrono::milliseconds timeout);

  // Everything the child writes to stdout until it closes it (usually: until it exits),
  // including anything buffered by ReadLine. kDeadlineExceeded if stdout is still open after
  // `timeout` (what was read is kept).
  Result<std::string> ReadAll(std::chrono::milliseconds timeout);

  // Sends `sig` without waiting. kFailedPrecondition if the child was already reaped.
  Result<void> Kill(int sig = SIGKILL);

  // SIGTERM, then waits up to `grace`; still running after that: SIGKILL and wait. Returns how
  // the child ended (KilledBy(SIGKILL) tells that it ignored SIGTERM).
  Result<ExitStatus> Terminate(std::chrono::milliseconds grace = std::chrono::seconds(10));

  // Waits for the child to end and reaps it; later calls return the same status.
  Result<ExitStatus> Wait();
  // As Wait(), but kDeadlineExceeded if the child is still running after `timeout`.
  Result<ExitStatus> WaitFor(std::chrono::milliseconds timeout);

  // True until the child has been reaped (a zombie still counts as running).
  bool running() const { return pid_ > 0 && !status_; }

 private:
  Subprocess(pid_t pid, int stdout_fd) : pid_(pid), stdout_fd_(stdout_fd) {}
  void Release();  // kill + reap + close; leaves the object empty
  // Reads what is available, waiting at most until `deadline`. False on timeout; sets
  // stdout_closed_ on EOF.
  Result<bool> Fill(std::chrono::steady_clock::time_point deadline);
  Result<std::optional<ExitStatus>> Reap(bool block);

  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  bool stdout_closed_ = false;
  std::string buffered_;  // read from stdout, not yet returned
  std::optional<ExitStatus> status_;
};

}  // namespace reckon::testing
