// ShardLeases: a cluster's shard leases and server heartbeats in its PostgreSQL journal
// (tables reckon_shard_leases and reckon_servers, schema version 2), over a connection of its
// own. The membership loop of each server (api/server/cluster_member.h) is its one user; the
// `reckon cluster` command reads it.
//
// A lease is a row (shard, owner, address, epoch, expires_at). Times are the database's clock
// (now()), never a server's, so servers need no synchronized clocks to agree on expiry:
//   - Acquire takes shards that are unowned, expired, or still named after this server by an
//     earlier life of it (same server id; that life is over, since one id is one process),
//     raising each one's epoch; SKIP LOCKED lets servers acquire at once without waiting on
//     each other.
//   - Renew extends the leases this server holds at the epochs it holds, and returns which
//     it still has: a shard missing from the answer was taken over.
//   - Release gives shards back (owner '', expired), only at the held epoch.
// Safety does not rest on expiry: the epoch fence in every append (storage/shard_fence.h)
// does. Expiry only decides when another server may take a shard over. Appends and takeovers
// are ordered by transaction-scoped advisory locks (kShardLockClass, shard): an append holds
// the shared one while it checks the lease and commits; Acquire takes the exclusive one of each
// shard it took, in shard order, before its transaction commits, so it waits for the appends
// that checked the old epoch, and every later append reads the new one.
//
// Errors: kUnavailable when the database cannot be reached (the caller retries next tick);
// kFailedPrecondition when the journal predates cluster mode (schema version < 2).
// Not thread-safe: one owner.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/storage/shard_fence.h"

namespace reckon::storage {

class PgConnection;

// The first key of the two-key advisory locks that order appends and takeovers of a shard
// (the second is the shard number); apart from the owner lock's single key.
inline constexpr const char* kShardLockClass = "7305813";

struct ShardLease {
  int shard = 0;
  std::string owner;    // '' when unowned
  std::string address;  // where the owner serves clients
  std::int64_t epoch = 0;
  std::int64_t expires_in_ms = 0;  // negative: expired (by the database's clock)
};

class ShardLeases {
 public:
  // Connects with `conninfo` and checks that the lease tables exist. The session ends a
  // transaction idle for longer than `idle_limit` (the lease), so that a server paused inside
  // a takeover cannot hold its locks for long.
  static Result<std::unique_ptr<ShardLeases>> Open(
      const std::string& conninfo,
      std::chrono::milliseconds idle_limit = std::chrono::milliseconds(3000));
  ~ShardLeases();
  ShardLeases(const ShardLeases&) = delete;
  ShardLeases& operator=(const ShardLeases&) = delete;

  // Records that `server_id` (serving at `address`) is alive now.
  Result<void> Heartbeat(const std::string& server_id, const std::string& address);
  // Servers seen within `window` (by the database's clock), this one included once it beat.
  Result<int> LiveServers(std::chrono::milliseconds window);
  // Extends the leases of `held` by `lease`; returns those still held at their epochs.
  Result<std::vector<HeldShard>> Renew(const std::string& server_id,
                                       const std::vector<HeldShard>& held,
                                       std::chrono::milliseconds lease);
  // Takes at most `count` shards that are free, expired, or named after `server_id` but not in
  // `held`, lowest shard first; returns them with their new epochs.
  Result<std::vector<HeldShard>> Acquire(const std::string& server_id, const std::string& address,
                                         const std::vector<HeldShard>& held, int count,
                                         std::chrono::milliseconds lease);
  // Gives `shards` back (only where this server still holds them at those epochs).
  Result<void> Release(const std::string& server_id, const std::vector<HeldShard>& shards);
  // This server leaves: its heartbeat row is deleted, so the others count it gone at once.
  Result<void> Leave(const std::string& server_id);
  // Every lease, by shard.
  Result<std::vector<ShardLease>> List();

  const std::string& display() const;

 private:
  ShardLeases(std::unique_ptr<PgConnection> conn, std::chrono::milliseconds idle_limit);
  // Connects again if the connection broke, with the session set up again.
  Result<void> Reconnected();
  std::unique_ptr<PgConnection> conn_;
  std::chrono::milliseconds idle_limit_;
};

}  // namespace reckon::storage
