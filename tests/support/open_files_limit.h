// OpenFilesLimit: makes a process (this one, or a child it started) unable to open any new
// file descriptor, for tests of what a server does when it runs out of them: the soft
// RLIMIT_NOFILE of the process is lowered to its lowest free descriptor number, so the next
// socket, accept or open fails with EMFILE, while the descriptors it holds keep working.
// Restore() (or the destructor) puts the limit back as it was.
//
// Create the client sockets a test needs before the limit when the process is this one. A
// process may lower and raise its children's limits (prlimit(2): same user), up to their
// hard limit. Not thread-safe; the process it limits may open and close descriptors between
// the look at its table and the limit, so a busy process may keep a few more.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include "reckon/base/error.h"

namespace reckon::testing {

class OpenFilesLimit {
 public:
  // Limits `pid` (0: this process). kUnavailable if its descriptor table cannot be read or
  // the limit set (the message says which).
  static Result<OpenFilesLimit> Exhaust(pid_t pid);
  ~OpenFilesLimit() { Restore(); }
  OpenFilesLimit(OpenFilesLimit&& other) noexcept;
  OpenFilesLimit& operator=(OpenFilesLimit&&) = delete;
  OpenFilesLimit(const OpenFilesLimit&) = delete;
  OpenFilesLimit& operator=(const OpenFilesLimit&) = delete;

  // The limit now in force (the lowest free descriptor at the time of Exhaust).
  rlim_t limit() const { return limit_; }
  // Puts the limit back as it was; idempotent. False if the process is gone or refused it.
  bool Restore();

 private:
  OpenFilesLimit(pid_t pid, rlimit saved, rlim_t limit) : pid_(pid), saved_(saved), limit_(limit) {}
  pid_t pid_;
  rlimit saved_;
  rlim_t limit_;
  bool restored_ = false;
};

}  // namespace reckon::testing
