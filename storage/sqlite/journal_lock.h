// JournalLock: the exclusive ownership lock of one journal file, held by the one process that
// writes it (an engine). A second process that tries to own the same file is refused at once,
// with an error naming the holder, before it opens the file with SQLite: under the same path,
// a symbolic link to it, a hard link to it, or the path through another mount of its
// directory alike. Ownership belongs to the file (its device and inode), not to the name.
//
// Mechanism: two flock(LOCK_EX | LOCK_NB) locks, kept for as long as the JournalLock lives.
//   1. On the journal file itself, on a descriptor of its own (the file is created empty if
//      absent, as SQLite would create it). A flock belongs to the open file and so to its
//      inode: every name of the file conflicts. This lock decides ownership, and it is taken
//      first: a refused opener has opened the file and nothing else (no -wal or -shm of its
//      own name, which SQLite would create beside a hard link, no sidecar).
//   2. On a sidecar `<real path>.lock`, the real path being the journal's with every symbolic
//      link resolved, so that a link and its target share one sidecar. It records who holds
//      the journal, for refusals and `reckon admin check` (informational only):
//
//        pid=4242
//        host=build-01
//        since=2026-11-30T19:10:09Z
//        command=refund-agent --journal /var/lib/reckon/journal.db
//
//      A holder that came through a hard link or another mount wrote its record beside its
//      own name; the refusal then names its pid from /proc/locks instead.
// The kernel drops both when the process ends, however it ends (SIGKILL included): a stale
// lock file may remain on disk, but it never blocks a restart.
//
// Why flock, beside SQLite: SQLite's unix VFS locks the database, its -wal and -shm with POSIX
// fcntl byte-range locks. On Linux, flock locks and fcntl locks are independent (neither sees
// the other), so this lock never makes SQLite busy and SQLite's locks never block it. An OFD
// lock (F_OFD_SETLK) would conflict with SQLite's own fcntl locks on overlapping bytes, even
// within this process, and would need a range SQLite never touches; flock needs no such care.
// The one interaction left is POSIX's: closing any descriptor of a file drops every fcntl
// lock the process holds on it, SQLite's included. So the journal descriptor is opened before
// SQLite opens the file and closed only after every SQLite connection of this process to it
// has closed (SqliteJournal declares its lock before its connection; companions close before
// their owner), DescribeHolder never opens the journal, and a refusal, which closes the
// descriptor it opened, can only disturb a process that already has the journal open under
// another name (a programming error; across processes, the case this lock is for, it
// touches nothing).
//
// flock locks belong to the open file description, so a second Acquire in the same process is
// refused too (one owner per journal, even within a process); companion connections of the
// owning process open the journal without the lock (SqliteJournalOptions::Mode). Descriptors
// are close-on-exec, so child processes never inherit ownership. Limits: flock is advisory (a
// process that ignores it is not stopped), and on network filesystems Linux emulates it with
// fcntl locks (it would then conflict with SQLite's); keep journals on a local disk.
//
// Ownership: a JournalLock owns its two descriptors; moving transfers the lock, destruction
// (or process death) releases it. Not thread-safe; it has no operations besides its lifetime.
#pragma once

#include <string>

#include "reckon/base/error.h"

namespace reckon::storage {

class JournalLock {
 public:
  // Takes the ownership lock of the journal at `journal_path` (created empty if absent; the
  // sidecar is `<real path>.lock`, created if absent) and records this process in the sidecar.
  // Errors: kFailedPrecondition when another holder has the file under any name (the message
  // names its pid, and its host, since when and command when it recorded them beside the same
  // real path, and says what to do) or when the path is not a regular file; kUnavailable when
  // a file cannot be opened or locked (permissions, missing directory).
  static Result<JournalLock> Acquire(const std::string& journal_path);

  // Who holds the journal at `journal_path` now: its sidecar's record ("pid=... host=..."), or
  // "pid=N (...another name...)" when a process holds the file through another name; empty
  // when nobody holds it. Reads the sidecar and /proc/locks, never opens the journal (see the
  // header comment). For diagnostics (reckon admin check).
  static std::string DescribeHolder(const std::string& journal_path);

  JournalLock(JournalLock&& other) noexcept;
  JournalLock& operator=(JournalLock&& other) noexcept;
  JournalLock(const JournalLock&) = delete;
  JournalLock& operator=(const JournalLock&) = delete;
  ~JournalLock();

  // The sidecar: `<real path of the journal>.lock`.
  const std::string& lock_path() const { return lock_path_; }

 private:
  JournalLock(int journal_fd, int lock_fd, std::string lock_path)
      : journal_fd_(journal_fd), lock_fd_(lock_fd), lock_path_(std::move(lock_path)) {}
  void Close();

  int journal_fd_ = -1;  // the journal file, flock'ed: the lock that decides
  int lock_fd_ = -1;     // the sidecar, flock'ed: the holder's record
  std::string lock_path_;
};

}  // namespace reckon::storage
