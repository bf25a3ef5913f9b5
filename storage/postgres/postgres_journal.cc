#include "reckon/storage/postgres/postgres_journal.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <thread>
#include <utility>

#include "reckon/storage/outbox_store.h"
#include "reckon/storage/postgres/journal_statements.h"
#include "reckon/storage/postgres/postgres_check.h"
#include "reckon/storage/postgres/schema.h"
#include "reckon/storage/postgres/shard_leases.h"
#include "reckon/storage/shard.h"

namespace reckon::storage {
namespace {

// The session advisory lock that says who writes the database (a single key below 2^31, so it
// shows in pg_locks as classid 0, objid this, objsubid 1): a single owner (kOwner) holds it
// exclusive, each cluster member (kClusterMember) holds it shared. Members share the database
// with each other and with nobody else.
constexpr const char* kOwnerLockKey = "730581261";

// The sessions that hold the owner lock now, for a refusal's message.
struct Holders {
  std::string single;  // the exclusive holder, described; empty if none
  std::string member;  // one shared holder (a cluster member), described; empty if none
  std::int64_t members = 0;
};

Holders DescribeHolders(PgConnection& conn) {
  auto held = conn.Query(
      std::string("SELECT l.mode, a.application_name, coalesce(host(a.client_addr), 'local'), "
                  "a.pid::bigint FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                  "WHERE l.locktype = 'advisory' AND l.classid = 0 AND l.objsubid = 1 AND "
                  "l.objid = ") +
      kOwnerLockKey +
      " AND l.granted AND l.database = (SELECT oid FROM pg_database "
      "WHERE datname = current_database()) ORDER BY a.pid");
  Holders holders;
  if (!held) return holders;
  const PgResult& r = held.value();
  for (int row = 0; row < r.rows(); ++row) {
    const std::string who = "'" + std::string(r.Text(row, 1)) + "' from " +
                            std::string(r.Text(row, 2)) + " (server pid " +
                            std::to_string(r.Int(row, 3)) + ")";
    if (r.Text(row, 0) == "ExclusiveLock") {
      holders.single = who;
    } else {
      ++holders.members;
      if (holders.member.empty()) holders.member = who;
    }
  }
  return holders;
}

Error Refusal(PgConnection& conn, bool cluster_member) {
  const Holders holders = DescribeHolders(conn);
  const std::string journal = "journal '" + conn.display() + "'";
  if (!cluster_member && holders.members > 0) {
    return Err(Errc::kFailedPrecondition,
               journal + " is held by a cluster (" + std::to_string(holders.members) +
                   " member session(s), " + holders.member +
                   " among them); a process that is not a cluster member cannot write a "
                   "cluster's database: start this server with --cluster to join the cluster, "
                   "or stop every member first");
  }
  if (cluster_member) {
    return Err(Errc::kFailedPrecondition,
               journal + " is owned by a single server (not a cluster member): " +
                   (holders.single.empty() ? std::string("another session") : holders.single) +
                   "; a cluster member cannot share its database: stop that server (and start "
                   "it again with --cluster to make it a member), then start this one");
  }
  return Err(Errc::kFailedPrecondition,
             journal + " is owned by " +
                 (holders.single.empty() ? std::string("another session") : holders.single) +
                 "; one process writes a journal: stop that one first, or open this one as "
                 "a companion of it");
}

// Takes the owner lock, exclusive for a single owner or shared for a cluster member. Tries for
// a second: the session of a journal this process has just closed may not have ended on the
// server yet. pg_try_advisory_lock* never queues, so a refused opener delays nobody.
Result<void> TakeOwnerLock(PgConnection& conn, bool cluster_member) {
  const std::string sql = std::string(cluster_member ? "SELECT pg_try_advisory_lock_shared("
                                                     : "SELECT pg_try_advisory_lock(") +
                          kOwnerLockKey + ")::int";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (true) {
    RECKON_TRY(PgResult taken, conn.Query(sql));
    if (taken.Int(0, 0) == 1) return Ok();
    if (std::chrono::steady_clock::now() >= deadline) return Refusal(conn, cluster_member);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

Result<void> RequireCurrentSchema(PgConnection& conn) {
  RECKON_TRY(const int version, PgSchemaVersion(conn));
  const int newest = PgJournalMigrations().back().version;
  if (version == newest) return Ok();
  return Err(Errc::kFailedPrecondition,
             "journal '" + conn.display() + "' has schema version " + std::to_string(version) +
                 " and this release reads version " + std::to_string(newest) +
                 (version < newest ? "; open it once with an engine of this release to migrate"
                                   : "; use a newer reckon"));
}

std::span<const std::byte> AsBytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

}  // namespace

bool IsPostgresConninfo(const std::string& journal) {
  return journal.starts_with("postgresql://") || journal.starts_with("postgres://");
}

Result<std::unique_ptr<Journal>> OpenPostgresJournal(const std::string& conninfo,
                                                     PostgresJournalOptions options) {
  RECKON_TRY(auto journal, PostgresJournal::Open(conninfo, options));
  return std::unique_ptr<Journal>(std::move(journal));
}

Result<std::unique_ptr<PostgresJournal>> PostgresJournal::Open(const std::string& conninfo,
                                                               PostgresJournalOptions options) {
  RECKON_TRY(PgConnection conn, PgConnection::Connect(conninfo));
  using Mode = PostgresJournalOptions::Mode;
  if (options.mode == Mode::kOwner) {
    RECKON_TRY(TakeOwnerLock(conn, /*cluster_member=*/false));
    RECKON_TRY(PgMigrateForward(conn, PgJournalMigrations()));
  } else if (options.mode == Mode::kClusterMember) {
    if (options.fence == nullptr) {
      return Err(Errc::kInvalidArgument,
                 "a cluster member's journal needs the server's shard fence");
    }
    RECKON_TRY(TakeOwnerLock(conn, /*cluster_member=*/true));
    RECKON_TRY(PgMigrateForward(conn, PgJournalMigrations()));
    RECKON_TRY(conn.Exec("SET idle_in_transaction_session_timeout = " +
                         std::to_string(std::max<std::int64_t>(options.lease.count(), 100))));
  } else {
    RECKON_TRY(RequireCurrentSchema(conn));
  }
  RECKON_TRY(const int version, PgSchemaVersion(conn));
  RECKON_TRY(const bool checksums, DataChecksumsOn(conn));
  RECKON_TRY(pg::PrepareJournalStatements(conn));
  const ShardFence* fence = options.mode == Mode::kClusterMember ? options.fence : nullptr;
  auto journal = std::unique_ptr<PostgresJournal>(
      new PostgresJournal(std::move(conn), version, options.payload_codec, fence));
  if (!checksums) journal->integrity_warning_ = NoDataChecksumsWarning(journal->path());
  return journal;
}

PostgresJournal::PostgresJournal(PgConnection conn, int schema_version,
                                 const PayloadCodec* payload_codec, const ShardFence* fence)
    : conn_(std::move(conn)),
      schema_version_(schema_version),
      payload_codec_(payload_codec),
      fence_(fence),
      decoder_(payload_codec) {}

Result<std::vector<Result<void>>> PostgresJournal::CheckFence(
    std::span<const AppendRequest* const> requests) {
  // First a shared advisory lock per distinct shard (transaction-scoped, in shard order, so
  // appends and takeovers never wait on each other in a cycle); a takeover holds the exclusive
  // one while it raises the epoch (ShardLeases::Acquire). Then the lease rows, read by a
  // statement of its own, so with a snapshot taken after the locks were granted: a takeover
  // either waits for this transaction, or committed before the read and is seen. Both go in
  // one round trip; the locks live in the lock manager and write nothing, unlike row locks.
  // Shard numbers are integers, so they are written into the text.
  std::set<int> shards;
  for (const AppendRequest* request : requests) shards.insert(ShardOf(request->run.workflow_id));
  std::string values;
  std::string list;
  for (int shard : shards) {
    values += std::string(values.empty() ? "" : ",") + "(" + std::to_string(shard) + ")";
    list += (list.empty() ? "" : ",") + std::to_string(shard);
  }
  PgBatch batch;
  batch.Sql("SELECT pg_advisory_xact_lock_shared(" + std::string(kShardLockClass) +
            ", s) FROM (VALUES " + values + ") AS t(s)");
  batch.Sql("SELECT shard, owner, epoch FROM reckon_shard_leases WHERE shard IN (" + list + ")");
  RECKON_TRY(std::vector<PgResult> results, conn_.RunBatch(batch));
  const PgResult& rows = results.back();
  std::map<int, std::pair<std::string, std::int64_t>> leases;  // shard -> (owner, epoch)
  for (int i = 0; i < rows.rows(); ++i) {
    leases[static_cast<int>(rows.Int(i, 0))] = {std::string(rows.Text(i, 1)), rows.Int(i, 2)};
  }
  const std::string server_id = fence_->server_id();
  std::vector<Result<void>> out;
  out.reserve(requests.size());
  for (const AppendRequest* request : requests) {
    const int shard = ShardOf(request->run.workflow_id);
    const std::optional<std::int64_t> held = fence_->EpochOf(shard);
    const auto lease = leases.find(shard);
    const std::string owner = lease != leases.end() ? lease->second.first : std::string();
    const std::int64_t epoch = lease != leases.end() ? lease->second.second : 0;
    if (held && owner == server_id && epoch == *held) {
      out.push_back(Ok());
      continue;
    }
    out.push_back(Err(
        Errc::kFenced,
        "cluster: write refused, shard " + std::to_string(shard) + " of run '" +
            request->run.workflow_id + "' is held by '" + (owner.empty() ? "nobody" : owner) +
            "' at epoch " + std::to_string(epoch) +
            (held ? " while this server held epoch " + std::to_string(*held)
                  : " and this server does not hold it") +
            "; nothing was written, the shard's owner decides"));
  }
  return out;
}

Error PostgresJournal::Poisoned() const {
  return Err(Errc::kUnavailable,
             "journal '" + path() + "' refused the append: an earlier commit failed or the "
             "connection to PostgreSQL was lost, so what the server kept is unknown; restart "
             "the process to reopen the journal");
}

Result<AppendAck> PostgresJournal::Append(const AppendRequest& request) {
  const AppendRequest* one[] = {&request};
  return std::move(AppendGroup(one).front());
}

std::vector<Result<AppendAck>> PostgresJournal::AppendGroup(
    std::span<const AppendRequest* const> requests) {
  std::vector<Result<AppendAck>> results;
  results.reserve(requests.size());
  auto fail_all = [&](const Error& error) {
    results.clear();
    for (std::size_t i = 0; i < requests.size(); ++i) results.emplace_back(error);
    return std::move(results);
  };
  // The connection is gone (or was before): nothing of this transaction will commit, and the
  // fate of the last COMMIT may be unknown. Refuse everything until reopened.
  auto lost = [&](const Error& error) {
    poisoned_ = true;
    return fail_all(Err(Errc::kUnavailable, error.message()));
  };
  if (poisoned_ || conn_.broken()) return lost(Poisoned());
  if (auto begun = conn_.Exec("BEGIN"); !begun) {
    return conn_.broken() ? lost(begun.error()) : fail_all(begun.error());
  }
  std::vector<Result<void>> fenced;
  if (fence_ != nullptr) {
    auto checked = CheckFence(requests);
    if (!checked) {
      if (conn_.broken()) return lost(checked.error());
      (void)conn_.Exec("ROLLBACK");
      return fail_all(checked.error().WithContext("checking the shard leases"));
    }
    fenced = std::move(checked).value();
  }
  // A lone request needs no savepoint: if it fails, the transaction rolls back.
  const bool savepoints = requests.size() > 1;
  bool any_applied = false;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const AppendRequest* request = requests[i];
    if (!fenced.empty() && !fenced[i]) {
      results.emplace_back(fenced[i].error());
      continue;
    }
    if (request->events.empty()) {  // refused before it touches the transaction
      results.emplace_back(Err(Errc::kInvalidArgument,
                               "append to run '" + request->run.workflow_id + "/" +
                                   request->run.run_id +
                                   "' has no events; every state change needs one"));
      continue;
    }
    auto applied = ApplyOne(*request, savepoints);
    if (conn_.broken()) return lost(applied ? Poisoned() : applied.error());
    if (!applied && savepoints) {
      // ApplyOne released its savepoint only if it succeeded.
      if (auto undone = conn_.Exec("ROLLBACK TO append; RELEASE append"); !undone) {
        if (conn_.broken()) return lost(undone.error());
        // The transaction cannot go on without its savepoint: nothing of it commits.
        (void)conn_.Exec("ROLLBACK");
        return fail_all(undone.error().WithContext("rolling back an append's savepoint"));
      }
    }
    any_applied = any_applied || applied.has_value();
    results.push_back(std::move(applied));
  }
  if (!any_applied) {
    if (auto rolled = conn_.Exec("ROLLBACK"); !rolled && conn_.broken()) {
      return lost(rolled.error());
    }
    return results;
  }
  auto committed = conn_.Command("COMMIT");
  if (!committed || committed.value().command() != "COMMIT") {
    // What reached the server's WAL is unknown (the reply may be what was lost).
    const Error error = committed ? Err(Errc::kUnavailable, "the server rolled it back")
                                  : committed.error();
    (void)conn_.Exec("ROLLBACK");
    poisoned_ = true;
    return fail_all(Err(Errc::kUnavailable, "committing journal transaction on '" + path() +
                                                "': " + error.message()));
  }
  return results;
}

Result<AppendAck> PostgresJournal::ApplyOne(const AppendRequest& request, bool savepoint) {
  if (request.chained.empty()) return ApplyRun(request, savepoint, savepoint);
  RECKON_TRY(AppendAck ack, ApplyRun(request, savepoint, false));
  for (const AppendRequest& next : request.chained) {
    if (next.events.empty()) {
      return Err(Errc::kInvalidArgument, "a chained append to run '" + next.run.workflow_id +
                                             "/" + next.run.run_id + "' has no events");
    }
    RECKON_TRY(ApplyRun(next, false, false));
  }
  if (savepoint) {
    RECKON_TRY(conn_.Exec("RELEASE append"));
  }
  return ack;
}

// Two round trips for a run that exists (three for a new one): the run's row is locked (after
// the savepoint is set), then everything else of the request goes in one pipeline that ends
// with the savepoint's release.
Result<AppendAck> PostgresJournal::ApplyRun(const AppendRequest& request, bool savepoint,
                                            bool release) {
  const RunRef& run = request.run;
  const std::string name = "run '" + run.workflow_id + "/" + run.run_id + "'";
  PgBatch head;
  if (savepoint) head.Sql("SAVEPOINT append");
  PgParams key;
  key.Add(run.workflow_id).Add(run.run_id);
  head.Prepared(pg::kLockRun, std::move(key));
  RECKON_TRY(std::vector<PgResult> locked, conn_.RunBatch(head));
  const PgResult& row = locked.back();
  const bool found = row.rows() > 0;
  std::int64_t run_pk = found ? row.Int(0, 0) : 0;
  std::int64_t next_seq = found ? row.Int(0, 1) : 1;
  if (request.expected_next_seq != next_seq) {
    return Err(Errc::kConflict, name + " expected next sequence " +
                                    std::to_string(request.expected_next_seq) +
                                    " but the journal is at " + std::to_string(next_seq) +
                                    "; reload the run's history and decide again");
  }
  if (!found) {
    PgParams params;
    params.Add(run.workflow_id).Add(run.run_id).Add(request.workflow_type.value_or(""))
        .Add(request.now_us);
    RECKON_TRY(PgResult inserted, conn_.Run(pg::kInsertRun, params));
    if (inserted.rows() == 0) {
      return Err(Errc::kConflict, name + " expected next sequence 1 but another writer "
                                         "created the run meanwhile; reload the run's history "
                                         "and decide again");
    }
    run_pk = inserted.Int(0, 0);
  }
  const std::int64_t first_seq = next_seq;
  PgBatch tail;
  for (const EventBody& body : request.events) {
    const EventPlace place{run.workflow_id, run.run_id, next_seq};
    RECKON_TRY(std::string stored, EncodeStoredEvent(body, place, payload_codec_));
    PgParams params;
    params.Add(run_pk).Add(next_seq).Add(static_cast<std::int64_t>(EventTypeNumber(body)))
        .Add(request.now_us).AddBytes(AsBytes(stored));
    tail.Prepared(pg::kInsertEvent, std::move(params));
    ++next_seq;
  }
  PgParams update;
  update.Add(run_pk).Add(next_seq);
  if (request.status) {
    update.Add(RunStatusName(*request.status));
  } else {
    update.AddNull();
  }
  if (request.workflow_type) {
    update.Add(*request.workflow_type);
  } else {
    update.AddNull();
  }
  update.Add(request.now_us);
  tail.Prepared(pg::kUpdateRun, std::move(update));
  RECKON_TRY(AddDerived(request, run_pk, tail));
  if (release) tail.Sql("RELEASE append");
  RECKON_TRY(conn_.RunBatch(tail));
  return AppendAck{run_pk, first_seq, next_seq};
}

Result<void> PostgresJournal::AddDerived(const AppendRequest& request, std::int64_t run_pk,
                                         PgBatch& batch) {
  for (const OperationRow& op : request.operations) {
    PgParams p;
    p.Add(op.operation_id).Add(op.step_id).Add(op.tool).Add(SideEffectName(op.side_effect))
        .Add(op.state).Add(op.attempt).Add(op.intent_hash).Add(op.contract_hash)
        .Add(op.provider_ref).Add(op.due_at_us).Add(run_pk).Add(request.now_us);
    batch.Prepared(pg::kUpsertOperation, std::move(p));
  }
  for (const TimerRow& timer : request.timers_set) {
    PgParams p;
    p.Add(run_pk).Add(timer.timer_id).Add(timer.fire_at_us);
    batch.Prepared(pg::kUpsertTimer, std::move(p));
  }
  for (const std::string& timer_id : request.timers_cleared) {
    PgParams p;
    p.Add(run_pk).Add(timer_id);
    batch.Prepared(pg::kDeleteTimer, std::move(p));
  }
  for (const ApprovalRow& approval : request.approvals) {
    PgParams p;
    p.Add(approval.approval_id).Add(approval.operation_id).Add(run_pk)
        .Add(approval.intent_hash).Add(ApprovalStateName(approval.state))
        .Add(approval.decided_by).Add(approval.expires_at_us).Add(request.now_us);
    batch.Prepared(pg::kUpsertApproval, std::move(p));
  }
  for (const OutboxMessage& message : request.outbox) {
    SealedPayload stored{"", message.payload};
    if (payload_codec_ != nullptr) {
      RECKON_TRY(stored, payload_codec_->Seal(message.payload,
                                              OutboxSealContext(message.message_id)));
    }
    PgParams p;
    p.Add(message.message_id).Add(run_pk).Add(message.step_id).Add(message.subject)
        .AddBytes(AsBytes(stored.box)).Add(stored.key_id).Add(request.now_us);
    batch.Prepared(pg::kInsertOutbox, std::move(p));
  }
  return Ok();
}

}  // namespace reckon::storage
