// JournalLock: the exclusive ownership lock of one journal file, held by the one process that
// writes it (an engine). A second process that tries to own the same journal is refused at
// once, with an error naming the holder, instead of both running until a conditional append
// fences one of them.
//
// Mechanism: flock(LOCK_EX | LOCK_NB) on a sidecar file `<journal>.lock`, kept open for as
// long as the JournalLock lives. The kernel drops the lock when the process ends, however it
// ends (SIGKILL included): a stale lock file may remain on disk, but it never blocks a restart.
// The file's content is informational only (who holds it, for the refusal message):
//
//   pid=4242
//   host=build-01
//   since=2026-11-30T19:10:09Z
//   command=refund-agent --journal /var/lib/reckon/journal.db
//
// flock locks belong to the open file description, so a second Acquire in the same process is
// refused too (one owner per journal, even within a process); companion connections of the
// owning process open the journal without the lock (SqliteJournalOptions::Mode). The descriptor is
// close-on-exec, so child processes never inherit ownership. Limits: flock is advisory (a
// process that ignores it is not stopped) and is not reliable on network filesystems; keep
// journals on a local disk.
//
// Ownership: a JournalLock owns its descriptor; moving transfers the lock, destruction (or
// process death) releases it. Not thread-safe; it has no operations besides its lifetime.
#pragma once

#include <string>

#include "reckon/base/error.h"

namespace reckon::storage {

class JournalLock {
 public:
  // Takes the ownership lock of the journal at `journal_path` (the lock file is
  // `journal_path + ".lock"`, created if absent) and records this process in it.
  // Errors: kFailedPrecondition when another holder has it (the message names its pid, host,
  // since when and command, and says what to do); kUnavailable when the lock file cannot be
  // opened or locked (permissions, missing directory).
  static Result<JournalLock> Acquire(const std::string& journal_path);

  // Who holds the lock at `journal_path` now, as recorded in its lock file ("pid=... host=...");
  // empty when nobody holds it. For diagnostics (reckon admin check).
  static std::string DescribeHolder(const std::string& journal_path);

  JournalLock(JournalLock&& other) noexcept;
  JournalLock& operator=(JournalLock&& other) noexcept;
  JournalLock(const JournalLock&) = delete;
  JournalLock& operator=(const JournalLock&) = delete;
  ~JournalLock();

  const std::string& lock_path() const { return lock_path_; }

 private:
  JournalLock(int fd, std::string lock_path) : fd_(fd), lock_path_(std::move(lock_path)) {}

  int fd_ = -1;
  std::string lock_path_;
};

}  // namespace reckon::storage
