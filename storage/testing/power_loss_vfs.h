// PowerLossVfs: a SQLite VFS for tests that sits on the default unix VFS and can cut the power.
// Test support only; docs/TESTING.md, "Power-loss storage", describes the tests that use it.
//
// Every file SQLite opens through it for the main database, its WAL or a rollback journal is
// tracked by path in a PowerLossFile (storage/testing/power_loss_file.h): the writes,
// truncations, creations and deletions since the file's last xSync are pending, the rest is
// durable. Reads and writes go through to the real file at once, so SQLite sees a normal disk
// until the power goes off. Temporary files (statement journals, temp databases) pass through
// untracked: nothing survives them anyway.
//
// A cut is armed to happen at the n-th mutating call (xWrite, xTruncate, xSync or xDelete of a
// tracked file) from now, or made at once with CutNow. The call that trips it reaches the real
// file when it is a write, truncation or deletion (it was in flight), is recorded as pending,
// and fails with SQLITE_IOERR; a tripped xSync syncs nothing. From then until Reboot, every
// mutating call and every xOpen fails and changes nothing (the machine is dark); reads,
// locks and the shared-memory calls still work so that the caller can close its connections.
// Reboot, with every file closed, gives each tracked file the image a disk could hold after
// the cut (PowerLossFile::ImageAfterCut, the cut's shape drawn per file), writes those images
// to the real files, and leaves each database's -shm file as it was, deleted, or full of
// garbage: the -shm is memory that a reboot may not have written back, and SQLite rebuilds
// it when the first connection opens the database again.
//
// Every choice (the cut shapes, which pending mutations survive, the torn sectors, the
// garbage) is drawn from one generator seeded at construction, so the same seed and the same
// sequence of SQLite calls give the same disk: a failing seed reproduces.
//
// Self-check: before writing the images, Reboot compares each tracked file with what the model
// says it should hold (PowerLossFile::Live); a difference means some write bypassed the VFS
// (memory-mapped I/O, which this VFS does not offer, or a bug here) and fails the reboot.
//
// Registration: the VFS is registered under its own name, never as the default; a connection
// uses it by naming it (SqliteJournalOptions::vfs). The object owns its registration and must
// outlive every connection opened through it; the destructor unregisters it.
// Thread-safety: the VFS callbacks and the methods below take one mutex, so connections on
// several threads may use it; tests drive it from one.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>

#include "reckon/base/error.h"
#include "reckon/storage/testing/power_loss_file.h"

namespace reckon::storage {

class PowerLossVfs {
 public:
  // When creations and deletions of files (directory entries) become durable.
  enum class Metadata {
    // At the next sync of any file, as on ext4 and XFS, whose journal commits metadata in order.
    kOrdered,
    // Only at a directory sync, all POSIX promises. The unix VFS syncs the directory at the
    // first sync of a WAL or rollback journal it opened with SQLITE_OPEN_CREATE, and after a
    // deletion SQLite asks it to (synchronous = EXTRA); nowhere else. A file's own sync still
    // makes its own creation durable (a simplification: the main database's directory entry
    // is synced by the journal's first directory sync in any case).
    kStrictPosix,
  };

  // Registers a VFS called `name` over SQLite's "unix" VFS. kAlreadyExists if a VFS of that
  // name is registered; kUnavailable if there is no unix VFS.
  static Result<std::unique_ptr<PowerLossVfs>> Register(std::string name, std::uint64_t seed,
                                                        Metadata metadata = Metadata::kOrdered);
  ~PowerLossVfs();
  PowerLossVfs(const PowerLossVfs&) = delete;
  PowerLossVfs& operator=(const PowerLossVfs&) = delete;

  const std::string& name() const { return name_; }

  // The power goes off when the (ops + 1)-th mutating call from now is issued: ArmCut(0) cuts
  // at the next one. Replaces an earlier arming.
  void ArmCut(std::int64_t ops);
  void CutNow();
  bool powered_off() const;

  struct RebootReport {
    int files = 0;              // tracked files
    int pending = 0;            // mutations that were not synced when the power went off
    int shm_files_damaged = 0;  // -shm files deleted or filled with garbage
  };
  // The disk comes back (see the file comment). Disarms any cut. kFailedPrecondition if a file
  // opened through this VFS is still open; kInternal if a tracked file's content differs from
  // the model (the self-check); kUnavailable if a real file cannot be written.
  Result<RebootReport> Reboot();

  // Counts since registration, for the test's report.
  struct Stats {
    std::int64_t mutating_calls = 0;  // xWrite, xTruncate, xSync, xDelete of tracked files
    std::int64_t syncs = 0;
    std::int64_t cuts = 0;
    std::int64_t pending_at_cuts = 0;  // unsynced mutations the cuts could drop or tear
  };
  Stats stats() const;

 private:
  struct Glue;  // the sqlite3_vfs and sqlite3_io_methods callbacks (power_loss_vfs.cc)
  friend struct Glue;
  enum class Tick { kGo, kTripped, kDark };

  PowerLossVfs(std::string name, std::uint64_t seed, Metadata metadata, sqlite3_vfs* real);
  // A directory sync: every file's pending creations and deletions become durable.
  void SyncDirectoryLocked();
  Tick TickLocked();  // one mutating call: whether it runs, trips the cut, or meets the dark
  // The tracked state of `path`, created from the real file's content on first sight.
  PowerLossFile& TrackLocked(const std::string& path);

  const std::string name_;
  const Metadata metadata_;
  sqlite3_vfs* const real_;  // SQLite's unix VFS; not owned
  sqlite3_vfs vfs_{};        // what SQLite calls; pAppData points here

  mutable std::mutex mutex_;
  std::mt19937_64 rng_;                          // guarded by mutex_
  std::map<std::string, PowerLossFile> files_;   // guarded by mutex_; by full path
  std::set<std::string> databases_;              // guarded by mutex_; main database paths
  int open_files_ = 0;                           // guarded by mutex_
  bool dark_ = false;                            // guarded by mutex_
  std::int64_t countdown_ = -1;                  // guarded by mutex_; -1: not armed
  Stats stats_;                                  // guarded by mutex_
};

}  // namespace reckon::storage
