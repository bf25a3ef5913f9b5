// SqliteJournal: the Journal (storage/journal.h) in one SQLite file in WAL mode. Format:
// docs/JOURNAL_FORMAT.md. It keeps the durability and threading contracts of the interface:
// one SqliteJournal is one SQLite connection, used by one owner at a time.
//
// A group is one transaction; each request of it runs in its own SAVEPOINT, so a conflict
// rolls back only that request. After a failed COMMIT the journal is poisoned (what reached
// the WAL is unknown) and refuses writes until the file is reopened.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "reckon/base/error.h"
#include "reckon/storage/event_codec.h"
#include "reckon/storage/journal.h"
#include "reckon/storage/sqlite/journal_lock.h"
#include "reckon/storage/sqlite/sqlite.h"

namespace reckon::storage {

struct SqliteJournalOptions {
  enum class Mode {
    // The process's writer (an engine): takes the ownership lock (kFailedPrecondition naming
    // the holder if another process has it), checks integrity, applies migrations.
    kOwner,
    // Another connection of the process that holds the kOwner journal on the same file (the
    // server's reader beside its commit connection): no lock, no check; may write. Never use
    // it from a process that does not own the journal.
    kCompanion,
    // A read-only SQLite connection, no lock, no migration: audits and `reckon admin check`.
    // Works beside a running owner (WAL readers see its last commit). kNotFound if the file
    // does not exist; kFailedPrecondition if its schema is not this release's.
    kReadOnly,
  };
  Mode mode = Mode::kOwner;
  // kOwner only: run PRAGMA quick_check before anything else and refuse a damaged file
  // (kCorruption naming the file and the first problems). It reads every page once
  // (docs/PERFORMANCE.md, "Integrity check at open"). Turn off only for benchmarks.
  bool check_at_open = true;
  // kOwner, a new file only: every page carries a checksum, verified on every read
  // (storage/sqlite/journal_checksums.h; docs/PERFORMANCE.md, "Journal checksums"). An
  // existing file keeps the format it has. Turn off only for benchmarks and for tests of
  // journals written before checksums.
  bool page_checksums = true;
  enum class Sync {
    kFull,    // fsync the WAL on every commit: an acknowledged append survives power loss
    kNormal,  // survives a process crash; the last commits may be lost on power loss
    kOff,     // tests and benchmarks of CPU cost only: a crash of the OS can corrupt the file
  };
  Sync sync = Sync::kFull;
  std::chrono::milliseconds busy_timeout{5000};
  // WAL pages between automatic checkpoints. Each checkpoint copies the distinct pages the WAL
  // holds into the database file and fsyncs it; a larger value lets many commits that touch the
  // same pages share one copy (at the price of a larger -wal file and a longer recovery scan).
  int wal_autocheckpoint_pages = 8192;  // 32 MiB of 4 KiB pages
  // Page cache of the connection, in KiB. The engine's working set (run index, operations,
  // the right edge of the event log) should fit.
  int cache_kib = 65536;
  // Seals the payload fields of every event written and opens those read (storage/
  // payload_codec.h; format in docs/JOURNAL_FORMAT.md, "Sealed payloads"). Not owned: it must
  // outlive the journal. Null: events are written in the clear, and reading a sealed one fails
  // with kFailedPrecondition naming its key id. Costs one AES-GCM seal per event with a payload
  // (docs/PERFORMANCE.md, "Payload codec").
  const PayloadCodec* payload_codec = nullptr;
  // The registered name of the SQLite VFS the file is opened with; empty: SQLite's default.
  // Tests only: the power-loss tests put storage/testing/power_loss_vfs.h here.
  std::string vfs;
};

// Opens or creates the journal at `path`, applies pending migrations, and checks that the
// file is a Reckon journal. In kOwner mode (SqliteJournalOptions::Mode, the default) it first
// takes the ownership lock and runs PRAGMA quick_check. Errors name the file:
// kFailedPrecondition (another process owns the journal, or it was written by a newer
// release), kCorruption (a damaged file, or not a database), kUnavailable (I/O).
Result<std::unique_ptr<Journal>> OpenSqliteJournal(const std::string& path,
                                                   SqliteJournalOptions options = {});

class SqliteJournal final : public Journal {
 public:
  // As OpenSqliteJournal, for callers that need the concrete type.
  static Result<std::unique_ptr<SqliteJournal>> Open(const std::string& path,
                                                     SqliteJournalOptions options = {});
  ~SqliteJournal() override;
  SqliteJournal(const SqliteJournal&) = delete;
  SqliteJournal& operator=(const SqliteJournal&) = delete;

  Result<AppendAck> Append(const AppendRequest& request) override;
  std::vector<Result<AppendAck>> AppendGroup(
      std::span<const AppendRequest* const> requests) override;

  using Journal::ListRuns;
  using Journal::ReadEvents;
  Result<std::optional<RunRow>> FindRun(const RunRef& run) override;
  Result<std::optional<RunRow>> FindLatestRun(const std::string& workflow_id) override;
  Result<std::vector<RunRow>> ListRuns(std::optional<RunStatus> status) override;
  Result<std::vector<RunRow>> QueryRuns(const RunQuery& query) override;
  Result<std::vector<Event>> ReadEvents(const RunRef& run, std::int64_t from_seq) override;
  Result<std::optional<OperationRow>> FindOperation(const std::string& operation_id) override;
  Result<std::vector<OperationRow>> ListOperations(std::int64_t run_pk) override;

  // SQLite's PRAGMA integrity_check: "ok", or its list of problems.
  Result<std::string> IntegrityCheck() override;
  Result<std::vector<RunRow>> ListArchivable(std::int64_t updated_before_us,
                                             std::size_t limit) override;
  Result<void> DeleteRun(const RunRef& run, std::int64_t expected_next_seq) override;

  Result<void> PutContract(const ContractRow& row) override;
  Result<std::vector<ContractRow>> ListContracts() override;
  int schema_version() const override { return schema_version_; }
  const std::string& path() const override { return db_.path(); }
  // Non-empty for a journal whose pages carry no checksum (NoChecksumsWarning).
  std::string integrity_warning() const override { return integrity_warning_; }

 private:
  struct Statements;  // journal_statements.h
  SqliteJournal(SqliteDb db, int schema_version, std::unique_ptr<Statements> stmts,
                const PayloadCodec* payload_codec);
  Result<AppendAck> ApplyOne(const AppendRequest& request);
  Result<void> ApplyDerived(const AppendRequest& request, std::int64_t run_pk);

  std::optional<JournalLock> lock_;  // kOwner: held until after db_ is closed
  SqliteDb db_;
  int schema_version_;
  bool poisoned_ = false;  // a commit failed: refuse writes until reopened
  const PayloadCodec* payload_codec_;  // not owned; may be null
  EventDecoder decoder_;
  std::string encode_buffer_;
  std::string integrity_warning_;

  std::unique_ptr<Statements> stmts_;
};

}  // namespace reckon::storage
