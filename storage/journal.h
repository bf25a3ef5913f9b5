// Journal: the interface to each run's append-only event history and the tables derived from
// it (runs, operations, timers, approvals, contracts). The engine, the server and the CLI take
// a `Journal&` and never learn which database holds it.
//
// Backends:
//   storage/sqlite/   SqliteJournal, opened with OpenSqliteJournal(): one SQLite file in WAL
//                     mode; its format is docs/JOURNAL_FORMAT.md.
//   storage/postgres/ PostgresJournal, opened with OpenPostgresJournal(): a PostgreSQL
//                     database over libpq (docs/JOURNAL_FORMAT.md, "PostgreSQL").
//   storage/testing/  FaultyJournal: wraps another Journal and fails or slows its commits.
// What every backend must do is tested once: storage/testing/journal_conformance.h.
//
// Durability contract (every backend keeps it):
//   - An append that returned a value is durable: a process that reopens the journal after a
//     crash finds it, whole. How much of a crash it survives is the backend's setting (SQLite
//     with sync kFull, the default: a power loss too; PostgreSQL: synchronous_commit = on
//     and the server's fsync).
//   - A request is applied whole or not at all: its events and the derived rows they cause.
//   - Every append is conditional: it names the sequence number its first event must get and
//     fails with Errc::kConflict if the run has moved on, which also fences a stale writer.
//   - kConflict and kInvalidArgument mean nothing of that request was written; the journal
//     stays usable.
//   - kUnavailable from a commit means the outcome is unknown: the requests may or may not be
//     on disk. The journal is then poisoned: it refuses every later write with kUnavailable
//     until the process reopens it and learns from the history what was kept. A caller must
//     never treat such a failure as "not written" (the engine stops; see engine/engine.h).
//
// Threading contract: a Journal is NOT thread-safe, reads included. One owner uses it at a
// time. Concurrent appenders go through a GroupCommitter (storage/group_commit.h), which owns
// that serialization and shares one commit among many appends; a party that reads while a
// GroupCommitter owns the journal opens a second Journal on the same file.
//
// Ownership across processes: one process writes a journal. A backend refuses a second
// writing process at once, naming the holder (SQLite: storage/sqlite/journal_lock.h;
// PostgreSQL: a session advisory lock).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/storage/event.h"
#include "reckon/storage/rows.h"

namespace reckon::storage {

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
  std::vector<ApprovalRow> approvals;        // upserted by approval_id
  std::vector<OutboxMessage> outbox;         // inserted; a message id already there is a conflict
  // Requests applied right after this one, in the same transaction, all or nothing with it:
  // ctx.ContinueAsNew closes a run and creates the next run of its workflow id this way. They
  // have no chained requests of their own; the ack is this request's.
  std::vector<AppendRequest> chained;
};

struct AppendAck {
  std::int64_t run_pk = 0;
  std::int64_t first_seq = 0;  // seq of the request's first event
  std::int64_t next_seq = 0;   // the run's next sequence number after the append
};

class Journal {
 public:
  virtual ~Journal() = default;

  // Appends in one transaction. Errors: kConflict (expected_next_seq is stale),
  // kInvalidArgument (no events), kUnavailable (the commit failed or the journal is poisoned;
  // see the durability contract above).
  virtual Result<AppendAck> Append(const AppendRequest& request) = 0;

  // Appends many requests with one commit. Each request succeeds or fails on its own (a
  // conflict in one leaves the others intact); if the commit itself fails, every request
  // fails. results[i] belongs to requests[i]; the pointers need live only during the call.
  virtual std::vector<Result<AppendAck>> AppendGroup(
      std::span<const AppendRequest* const> requests) = 0;

  // --- reads: what is committed, as of the call ---
  virtual Result<std::optional<RunRow>> FindRun(const RunRef& run) = 0;
  // The newest run of a workflow id, if any.
  virtual Result<std::optional<RunRow>> FindLatestRun(const std::string& workflow_id) = 0;
  // Runs, optionally only those with `status`, ordered by creation.
  virtual Result<std::vector<RunRow>> ListRuns(std::optional<RunStatus> status) = 0;
  Result<std::vector<RunRow>> ListRuns() { return ListRuns(std::nullopt); }
  // One page of the runs matching `query`, newest first (storage/rows.h). Served by indexes,
  // so its cost does not grow with the number of runs the filters leave out ahead of it
  // (except `tool` combined with a rare match; see docs/PERFORMANCE.md).
  virtual Result<std::vector<RunRow>> QueryRuns(const RunQuery& query) = 0;
  // Events of `run` with seq >= from_seq, in order. An unknown run has no events.
  virtual Result<std::vector<Event>> ReadEvents(const RunRef& run, std::int64_t from_seq) = 0;
  Result<std::vector<Event>> ReadEvents(const RunRef& run) { return ReadEvents(run, 1); }
  virtual Result<std::optional<OperationRow>> FindOperation(const std::string& operation_id) = 0;
  // Operations of one run, by step id.
  virtual Result<std::vector<OperationRow>> ListOperations(std::int64_t run_pk) = 0;

  // "ok", or the backend's list of problems in its stored data.
  virtual Result<std::string> IntegrityCheck() = 0;

  // --- retention (storage/archive.h): finished runs leave the journal ---
  // Finished runs (completed, failed, cancelled) last updated before `updated_before_us`
  // and with no outbox message still waiting for delivery, in run_pk order, at most `limit`.
  virtual Result<std::vector<RunRow>> ListArchivable(std::int64_t updated_before_us,
                                                     std::size_t limit) = 0;
  // Deletes one finished run in one transaction: its events, its run row and the rows derived
  // from them (operations, timers, approvals, outbox messages and their delivery records).
  // A write: on the commit side (the journal's owner, or the GroupCommitter's strand).
  // Errors, with nothing deleted: kNotFound (no such run: deleted already, which a caller
  // that retries after a crash treats as done), kConflict (its next_seq is not
  // `expected_next_seq`: it moved since it was read), kFailedPrecondition (it is running, or
  // an outbox message of it is not delivered yet: both named), kUnavailable (as for a commit:
  // the outcome is unknown and the journal is poisoned).
  virtual Result<void> DeleteRun(const RunRef& run, std::int64_t expected_next_seq) = 0;

  // Server mode: records a declared tool contract in its own transaction (no-op if the name
  // is already recorded; the caller compares hashes first), and lists them by name.
  virtual Result<void> PutContract(const ContractRow& row) = 0;
  virtual Result<std::vector<ContractRow>> ListContracts() = 0;

  // The format version of the stored data (SQLite: PRAGMA user_version; PostgreSQL: the
  // table reckon_schema). Each backend numbers its own versions.
  virtual int schema_version() const = 0;
  // Where the journal lives, for messages (SQLite: the file's path; PostgreSQL:
  // postgresql://user@host:port/db, never a password).
  virtual const std::string& path() const = 0;
  // Empty when the backend detects damage in every page it reads; otherwise what is not
  // verified and what to do about it, for the owner to log at start (SQLite: a journal written
  // before page checksums; PostgreSQL: a cluster without data checksums).
  virtual std::string integrity_warning() const { return {}; }
};

}  // namespace reckon::storage
