// The journal: each run's append-only event history and the tables derived from it, in one
// SQLite file (WAL mode). Format: docs/JOURNAL_FORMAT.md.
//
// Durability: with JournalOptions::sync == kFull (the default) an Append that returned success
// survives a process crash and a power loss. Every append is conditional: it names the
// sequence number its first event must get, and fails with Errc::kConflict if the run has moved
// on, which also fences a stale writer.
//
// Threading: a Journal is one SQLite connection and is NOT thread-safe. Exactly one owner uses
// it at a time; concurrent appenders go through a GroupCommitter, which owns that
// serialization and shares one commit (one fsync) among many appends.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/error.h"
#include "storage/event.h"
#include "storage/event_codec.h"
#include "storage/rows.h"
#include "storage/sqlite.h"

namespace reckon::storage {

struct JournalOptions {
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
};

// Everything one engine state change writes: a run's new events and the derived rows they
// cause. Applied atomically or not at all.
struct AppendRequest {
  RunRef run;
  std::int64_t expected_next_seq = 1;  // 1 creates the run
  std::int64_t now_us = 0;             // recorded_at of the events, updated_at of the rows
  std::vector<EventBody> events;       // at least one
  std::optional<std::string> workflow_type;  // recorded when the run is created
  std::optional<RunStatus> status;           // new run status, if it changes
  std::vector<OperationRow> operations;      // upserted by operation_id
  std::vector<TimerRow> timers_set;          // upserted by (run, timer_id)
  std::vector<std::string> timers_cleared;   // timer ids of this run
  std::vector<TaskRow> tasks_put;            // upserted by task_id
  std::vector<std::string> tasks_removed;    // task ids
  std::vector<ApprovalRow> approvals;        // upserted by approval_id
  std::vector<OutboxRow> outbox;             // inserted; a duplicate message_id is an error
};

struct AppendAck {
  std::int64_t run_pk = 0;
  std::int64_t first_seq = 0;  // seq of the request's first event
  std::int64_t next_seq = 0;   // the run's next sequence number after the append
};

class Journal {
 public:
  // Opens or creates the journal at `path`, applies pending migrations, and checks that the
  // file is a Reckon journal.
  static Result<std::unique_ptr<Journal>> Open(const std::string& path,
                                               JournalOptions options = {});
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Appends in one transaction. Errors: kConflict (expected_next_seq is stale),
  // kInvalidArgument (empty request), kUnavailable (I/O; after a failed commit the journal
  // refuses further writes until reopened, since what reached the disk is unknown).
  Result<AppendAck> Append(const AppendRequest& request);

  // Appends many requests in one transaction with one commit. Each request succeeds or fails
  // on its own (a conflict in one leaves the others intact); if the commit itself fails, every
  // request fails. results[i] belongs to requests[i].
  std::vector<Result<AppendAck>> AppendGroup(std::span<const AppendRequest* const> requests);

  // --- reads (see the Journal's threading rule) ---
  Result<std::optional<RunRow>> FindRun(const RunRef& run);
  // The newest run of a workflow id, if any.
  Result<std::optional<RunRow>> FindLatestRun(const std::string& workflow_id);
  // Runs, optionally only those with `status`, ordered by creation.
  Result<std::vector<RunRow>> ListRuns(std::optional<RunStatus> status = std::nullopt);
  // Events of `run` with seq >= from_seq, in order. An unknown run has no events.
  Result<std::vector<Event>> ReadEvents(const RunRef& run, std::int64_t from_seq = 1);
  Result<std::optional<OperationRow>> FindOperation(const std::string& operation_id);
  Result<std::vector<OperationRow>> ListOperations(std::int64_t run_pk);
  Result<std::vector<OperationRow>> ListOperationsInState(const std::string& state);
  Result<std::vector<TimerRow>> DueTimers(std::int64_t now_us, int limit);
  Result<std::vector<TaskRow>> ListTasks(const std::string& queue);
  Result<std::optional<ApprovalRow>> FindApproval(const std::string& approval_id);
  Result<std::vector<OutboxRow>> PendingOutbox(std::int64_t now_us, int limit);
  // Outbox delivery bookkeeping (not a run state change, so it carries no event).
  Result<void> MarkOutboxPublished(std::int64_t id, std::int64_t published_at_us);
  Result<void> MarkOutboxFailed(std::int64_t id, std::int64_t next_attempt_at_us);

  // "ok", or SQLite's list of problems.
  Result<std::string> IntegrityCheck();

  // Server mode: records a declared tool contract in its own transaction (no-op if the name
  // is already recorded; the caller compares hashes first), and lists them by name.
  Result<void> PutContract(const ContractRow& row);
  Result<std::vector<ContractRow>> ListContracts();
  int schema_version() const { return schema_version_; }
  const std::string& path() const { return db_.path(); }

 private:
  struct Statements;  // journal_statements.h
  Journal(SqliteDb db, int schema_version, std::unique_ptr<Statements> stmts);
  Result<AppendAck> ApplyOne(const AppendRequest& request);
  Result<void> ApplyDerived(const AppendRequest& request, std::int64_t run_pk);

  SqliteDb db_;
  int schema_version_;
  bool poisoned_ = false;  // a commit failed: refuse writes until reopened
  EventDecoder decoder_;
  std::string encode_buffer_;

  std::unique_ptr<Statements> stmts_;
};

}  // namespace reckon::storage
