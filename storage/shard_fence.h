// ShardFence: the shards this server holds in a cluster and the epoch of its lease on each
// (storage/shard.h; the leases: storage/postgres/shard_leases.h). A journal given a fence
// (PostgresJournalOptions::fence) checks every append against the lease row in the append's own
// transaction: it lands only if the row still names this server at the held epoch, and is
// refused with Errc::kFenced (nothing written) otherwise. Since a takeover raises the epoch, a
// server that was deposed (paused, cut off) cannot write to a shard it lost, even if it
// believes it still holds it.
//
// The fence itself is only this server's belief; the lease row is the truth. Hold() a shard
// only after its lease was taken at that epoch; Drop() it before giving the lease back.
//
// Thread-safe: the membership loop changes it on the server's executor while the commit thread
// reads it.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "reckon/storage/shard.h"

namespace reckon::storage {

// A shard held at an epoch (the fence's entries; what lease renewals and takeovers return).
struct HeldShard {
  int shard = 0;
  std::int64_t epoch = 0;
};

class ShardFence {
 public:
  explicit ShardFence(std::string server_id) : server_id_(std::move(server_id)) {}

  // The owner name the lease rows carry for this server. Set before the first Hold() (a
  // server learns its address, the default name, only once it listens).
  std::string server_id() const {
    std::lock_guard lock(mutex_);
    return server_id_;
  }
  void SetServerId(std::string server_id) {
    std::lock_guard lock(mutex_);
    server_id_ = std::move(server_id);
  }

  void Hold(int shard, std::int64_t epoch) {
    std::lock_guard lock(mutex_);
    epochs_.at(shard) = epoch;
  }
  void Drop(int shard) {
    std::lock_guard lock(mutex_);
    epochs_.at(shard) = 0;
  }
  // The epoch held on `shard`; nullopt when this server does not hold it.
  std::optional<std::int64_t> EpochOf(int shard) const {
    std::lock_guard lock(mutex_);
    const std::int64_t epoch = epochs_.at(shard);
    if (epoch == 0) return std::nullopt;
    return epoch;
  }
  bool Holds(int shard) const { return EpochOf(shard).has_value(); }
  // Every shard held, with its epoch, in shard order.
  std::vector<HeldShard> Held() const {
    std::lock_guard lock(mutex_);
    std::vector<HeldShard> out;
    for (int s = 0; s < kShardCount; ++s) {
      if (epochs_[s] != 0) out.push_back({s, epochs_[s]});
    }
    return out;
  }

 private:
  mutable std::mutex mutex_;
  std::string server_id_;
  std::array<std::int64_t, kShardCount> epochs_{};  // 0: not held (epochs start at 1)
};

}  // namespace reckon::storage
