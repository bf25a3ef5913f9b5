// PostgresJournal: the Journal (storage/journal.h) in a PostgreSQL database, over one libpq
// connection. Same semantics as SqliteJournal, so the engine and the server cannot tell them
// apart (storage/testing/journal_conformance.h runs one suite against both):
//   - the schema is migrated at open, its version kept in the database (postgres/schema.h);
//   - an append is conditional on (run, sequence): the run's row is locked (SELECT ... FOR
//     UPDATE, or created with ON CONFLICT DO NOTHING) and a stale expected_next_seq is
//     kConflict, also against a writer on another connection;
//   - the derived rows are written in the append's transaction;
//   - a group is one transaction, each request in its own SAVEPOINT, so a conflict rolls back
//     only that request; a request costs two round trips (three if it creates its run): the
//     run's row lock, then its events and rows in one pipeline; the session runs with synchronous_commit = on, so COMMIT returns
//     after the server flushed its WAL: an acknowledged append survives a crash of the server
//     (and of its machine, with the server's fsync on);
//   - events are stored as the same Cap'n Proto bytes (bytea), sealed by the same codec.
// Format: docs/JOURNAL_FORMAT.md, "PostgreSQL".
//
// Failures: a lost connection or a failed COMMIT poisons the journal: every later write is
// kUnavailable until the process opens a new one (what the server kept is unknown; the caller
// learns it from the history). Reads on a lost connection fail with kUnavailable too.
//
// Ownership across processes: the journal holds a session advisory lock on the database (the
// owner lock) for as long as its connection lives (released by the server if the process
// dies): exclusive in kOwner mode, shared in kClusterMember mode. So a second owner is refused,
// a cluster member is refused a database a single owner holds, and a single owner is refused a
// database a cluster holds, each with kFailedPrecondition naming the holder and what to do
// (after trying for a second, so that a process may close its journal and open it again at
// once).
//
// Cluster mode (kClusterMember): several servers write one database, each to the shards it
// holds a lease on (storage/shard_fence.h). Members share the owner lock; every group commit
// first takes a shared transaction-scoped advisory lock per shard it writes to, then reads their
// lease rows, and applies a request only if its row still names this server at the epoch the
// fence holds: a request to a shard that was taken over, or that the fence does not hold, is
// refused with Errc::kFenced (nothing of it written, the journal stays usable). A takeover
// holds the exclusive lock until it commits (storage/postgres/shard_leases.h), so an append
// lands before the new owner reads the run, or not at all. The writer session also ends a
// transaction left idle for longer than the lease (idle_in_transaction_session_timeout), so
// that a paused server cannot hold the locks a takeover waits for.
//
// Threading: not thread-safe, as every Journal; one connection, one owner at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "reckon/base/error.h"
#include "reckon/storage/event_codec.h"
#include "reckon/storage/journal.h"
#include "reckon/storage/postgres/pg.h"
#include "reckon/storage/shard_fence.h"

namespace reckon::storage {

struct PostgresJournalOptions {
  enum class Mode {
    // The process's writer: takes the ownership lock, applies migrations.
    kOwner,
    // Another connection of the process that owns the journal (a reader beside the commit
    // connection): no lock; refuses a database whose schema is not this release's.
    kCompanion,
    // A writer of a cluster: takes the owner lock shared (refused while a kOwner holds it),
    // applies migrations, checks every append against `fence` (required).
    kClusterMember,
  };
  Mode mode = Mode::kOwner;
  // Seals payload fields of events written and opens those read, as SqliteJournalOptions'
  // (storage/payload_codec.h). Not owned; must outlive the journal. Null: clear events.
  const PayloadCodec* payload_codec = nullptr;
  // kClusterMember: the shards this server holds (not owned; must outlive the journal).
  const ShardFence* fence = nullptr;
  // kClusterMember: the lease duration; a transaction idle for longer is ended by the server.
  std::chrono::milliseconds lease{3000};
};

// True when `journal` names a PostgreSQL database ("postgresql://..." or "postgres://...").
bool IsPostgresConninfo(const std::string& journal);

// Connects with `conninfo` (libpq syntax), then as PostgresJournalOptions::Mode says. Errors
// name the server: kUnavailable (cannot connect), kFailedPrecondition (another process owns
// the journal, or a cluster holds it and this is no member, or this is a member and a single
// owner holds it; or its schema is newer than this release), other codes from the migration.
Result<std::unique_ptr<Journal>> OpenPostgresJournal(const std::string& conninfo,
                                                     PostgresJournalOptions options = {});

class PostgresJournal final : public Journal {
 public:
  static Result<std::unique_ptr<PostgresJournal>> Open(const std::string& conninfo,
                                                       PostgresJournalOptions options = {});
  ~PostgresJournal() override = default;
  PostgresJournal(const PostgresJournal&) = delete;
  PostgresJournal& operator=(const PostgresJournal&) = delete;

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

  // The journal's own invariants (PostgreSQL keeps its pages' checksums itself): every run's
  // next_seq follows its last event, events are numbered 1..n without a gap, and no event,
  // operation, timer or approval belongs to a missing run. "ok", or one problem per line.
  Result<std::string> IntegrityCheck() override;
  Result<std::vector<RunRow>> ListArchivable(std::int64_t updated_before_us,
                                             std::size_t limit) override;
  Result<void> DeleteRun(const RunRef& run, std::int64_t expected_next_seq) override;

  Result<void> PutContract(const ContractRow& row) override;
  Result<std::vector<ContractRow>> ListContracts() override;
  int schema_version() const override { return schema_version_; }
  // The server and database, "postgresql://user@host:port/db" (never a password).
  const std::string& path() const override { return conn_.display(); }
  // Non-empty when the cluster has data checksums off (storage/postgres/postgres_check.h).
  std::string integrity_warning() const override { return integrity_warning_; }

 private:
  PostgresJournal(PgConnection conn, int schema_version, const PayloadCodec* payload_codec,
                  const ShardFence* fence);
  // Cluster mode: locks the lease row of every shard `requests` write to and returns, per
  // request, kFenced if this server no longer holds that shard at its epoch (else Ok).
  // Inside the group's transaction, before any request is applied.
  Result<std::vector<Result<void>>> CheckFence(std::span<const AppendRequest* const> requests);
  // Applies one request; with `savepoint`, inside a savepoint that it releases on success and
  // leaves for the caller to roll back on failure.
  // One request and its chained ones, in the savepoint `append` when `savepoint`.
  Result<AppendAck> ApplyOne(const AppendRequest& request, bool savepoint);
  // One run's part: opens the savepoint when `savepoint`, releases it when `release`.
  Result<AppendAck> ApplyRun(const AppendRequest& request, bool savepoint, bool release);
  // Adds the statements of the request's derived rows to `batch`.
  Result<void> AddDerived(const AppendRequest& request, std::int64_t run_pk, PgBatch& batch);
  // The error for a write on a poisoned journal, or for a write that lost the connection.
  Error Poisoned() const;

  PgConnection conn_;
  int schema_version_;
  bool poisoned_ = false;  // a commit failed or the connection was lost: refuse writes
  const PayloadCodec* payload_codec_;  // not owned; may be null
  const ShardFence* fence_;            // not owned; null unless a cluster member
  EventDecoder decoder_;
  std::string integrity_warning_;
};

}  // namespace reckon::storage
