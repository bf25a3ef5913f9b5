#include "reckon/storage/postgres/shard_leases.h"

#include <algorithm>

#include "reckon/storage/postgres/pg.h"
#include "reckon/storage/postgres/schema.h"

namespace reckon::storage {
namespace {

// "(3,7),(5,2)": the (shard, epoch) pairs as SQL row literals (integers only).
std::string PairList(const std::vector<HeldShard>& held) {
  std::string out;
  for (const HeldShard& h : held) {
    if (!out.empty()) out += ',';
    out += '(' + std::to_string(h.shard) + ',' + std::to_string(h.epoch) + ')';
  }
  return out;
}

std::vector<HeldShard> ReadHeld(const PgResult& r) {
  std::vector<HeldShard> out;
  for (int i = 0; i < r.rows(); ++i) out.push_back({static_cast<int>(r.Int(i, 0)), r.Int(i, 1)});
  return out;
}

}  // namespace

ShardLeases::ShardLeases(std::unique_ptr<PgConnection> conn, std::chrono::milliseconds idle_limit)
    : conn_(std::move(conn)), idle_limit_(idle_limit) {}

namespace {
Result<void> LimitIdleTransactions(PgConnection& conn, std::chrono::milliseconds limit) {
  return conn.Exec("SET idle_in_transaction_session_timeout = " +
                   std::to_string(std::max<std::int64_t>(limit.count(), 100)));
}
}  // namespace
ShardLeases::~ShardLeases() = default;

const std::string& ShardLeases::display() const { return conn_->display(); }

Result<std::unique_ptr<ShardLeases>> ShardLeases::Open(const std::string& conninfo,
                                                       std::chrono::milliseconds idle_limit) {
  RECKON_TRY(PgConnection conn, PgConnection::Connect(conninfo));
  RECKON_TRY(LimitIdleTransactions(conn, idle_limit));
  RECKON_TRY(const int version, PgSchemaVersion(conn));
  if (version < 2) {
    return Err(Errc::kFailedPrecondition,
               "journal '" + conn.display() + "' has schema version " + std::to_string(version) +
                   ", which has no shard leases; start a `reckon server --cluster` of this "
                   "release on it once to migrate it");
  }
  return std::unique_ptr<ShardLeases>(
      new ShardLeases(std::make_unique<PgConnection>(std::move(conn)), idle_limit));
}

Result<void> ShardLeases::Reconnected() {
  if (!conn_->broken()) return Ok();
  RECKON_TRY(conn_->Reconnect());
  return LimitIdleTransactions(*conn_, idle_limit_);
}

Result<void> ShardLeases::Heartbeat(const std::string& server_id, const std::string& address) {
  RECKON_TRY(Reconnected());
  PgParams p;
  p.Add(server_id).Add(address);
  RECKON_TRY(conn_->Query("INSERT INTO reckon_servers (server_id, address, seen_at) "
                          "VALUES ($1::text, $2::text, now()) ON CONFLICT (server_id) DO UPDATE "
                          "SET address = excluded.address, seen_at = excluded.seen_at",
                          p));
  return Ok();
}

Result<int> ShardLeases::LiveServers(std::chrono::milliseconds window) {
  RECKON_TRY(Reconnected());
  PgParams p;
  p.Add(static_cast<std::int64_t>(window.count()));
  RECKON_TRY(PgResult r, conn_->Query("SELECT count(*)::bigint FROM reckon_servers WHERE "
                                      "seen_at > now() - $1::bigint * interval '1 millisecond'",
                                      p));
  return static_cast<int>(r.Int(0, 0));
}

Result<std::vector<HeldShard>> ShardLeases::Renew(const std::string& server_id,
                                                  const std::vector<HeldShard>& held,
                                                  std::chrono::milliseconds lease) {
  if (held.empty()) return std::vector<HeldShard>{};
  RECKON_TRY(Reconnected());
  PgParams p;
  p.Add(server_id).Add(static_cast<std::int64_t>(lease.count()));
  RECKON_TRY(PgResult r,
             conn_->Query("UPDATE reckon_shard_leases SET expires_at = now() + $2::bigint * "
                          "interval '1 millisecond' WHERE owner = $1::text AND (shard, epoch) IN (" +
                              PairList(held) + ") RETURNING shard, epoch",
                          p));
  return ReadHeld(r);
}

Result<std::vector<HeldShard>> ShardLeases::Acquire(const std::string& server_id,
                                                    const std::string& address,
                                                    const std::vector<HeldShard>& held, int count,
                                                    std::chrono::milliseconds lease) {
  if (count <= 0) return std::vector<HeldShard>{};
  RECKON_TRY(Reconnected());
  std::string not_held;
  for (const HeldShard& h : held) {
    not_held += (not_held.empty() ? " AND shard NOT IN (" : ",") + std::to_string(h.shard);
  }
  if (!not_held.empty()) not_held += ')';
  PgParams p;
  p.Add(server_id).Add(address).Add(static_cast<std::int64_t>(lease.count()))
      .Add(static_cast<std::int64_t>(count));
  // Shards named after this server come first: an earlier life of it held them, and nobody
  // else has taken them over yet. One transaction: the update, then the exclusive advisory
  // lock of each shard taken (in shard order), held until the commit, which waits for the
  // appends still checking the old epoch.
  RECKON_TRY(conn_->Exec("BEGIN"));
  auto taken = [&]() -> Result<std::vector<HeldShard>> {
    RECKON_TRY(PgResult r,
               conn_->Query(
                   "UPDATE reckon_shard_leases l SET owner = $1::text, address = $2::text, "
                   "epoch = l.epoch + 1, expires_at = now() + $3::bigint * interval '1 "
                   "millisecond' WHERE l.shard IN (SELECT shard FROM reckon_shard_leases WHERE "
                   "(owner = '' OR expires_at < now() OR owner = $1::text)" + not_held +
                       " ORDER BY (owner = $1::text) DESC, shard LIMIT $4::bigint "
                       "FOR UPDATE SKIP LOCKED) RETURNING l.shard, l.epoch",
                   p));
    std::vector<HeldShard> got = ReadHeld(r);
    std::sort(got.begin(), got.end(),
              [](const HeldShard& a, const HeldShard& b) { return a.shard < b.shard; });
    if (got.empty()) return got;
    std::string values;
    for (const HeldShard& h : got) {
      values += std::string(values.empty() ? "" : ",") + "(" + std::to_string(h.shard) + ")";
    }
    RECKON_TRY(conn_->Exec("SELECT pg_advisory_xact_lock(" + std::string(kShardLockClass) +
                           ", s) FROM (VALUES " + values + ") AS t(s)"));
    return got;
  }();
  if (!taken) {
    (void)conn_->Exec("ROLLBACK");
    return taken.error();
  }
  RECKON_TRY(conn_->Exec("COMMIT"));
  return taken;
}

Result<void> ShardLeases::Release(const std::string& server_id,
                                  const std::vector<HeldShard>& shards) {
  if (shards.empty()) return Ok();
  RECKON_TRY(Reconnected());
  PgParams p;
  p.Add(server_id);
  RECKON_TRY(conn_->Query("UPDATE reckon_shard_leases SET owner = '', address = '', "
                          "expires_at = 'epoch' WHERE owner = $1::text AND (shard, epoch) IN (" +
                              PairList(shards) + ")",
                          p));
  return Ok();
}

Result<void> ShardLeases::Leave(const std::string& server_id) {
  RECKON_TRY(Reconnected());
  PgParams p;
  p.Add(server_id);
  RECKON_TRY(conn_->Query("DELETE FROM reckon_servers WHERE server_id = $1::text", p));
  return Ok();
}

Result<std::vector<ShardLease>> ShardLeases::List() {
  RECKON_TRY(Reconnected());
  RECKON_TRY(PgResult r,
             conn_->Query("SELECT shard, owner, address, epoch, (extract(epoch FROM "
                          "(expires_at - now())) * 1000)::bigint FROM reckon_shard_leases "
                          "ORDER BY shard"));
  std::vector<ShardLease> out;
  for (int i = 0; i < r.rows(); ++i) {
    ShardLease lease;
    lease.shard = static_cast<int>(r.Int(i, 0));
    lease.owner = r.Text(i, 1);
    lease.address = r.Text(i, 2);
    lease.epoch = r.Int(i, 3);
    lease.expires_in_ms = r.Int(i, 4);
    out.push_back(std::move(lease));
  }
  return out;
}

}  // namespace reckon::storage
