// Shards: how the runs of a cluster (several servers on one PostgreSQL journal) are split
// among its servers. A workflow's shard is a pure function of its id, the same in every
// release, so every server and client computes it alike: FNV-1a (64-bit) of the id's bytes,
// modulo kShardCount. The count is fixed: the lease table holds one row per shard
// (docs/JOURNAL_FORMAT.md, "PostgreSQL"), and changing it would move runs between shards.
#pragma once

#include <cstdint>
#include <string_view>

namespace reckon::storage {

inline constexpr int kShardCount = 64;

constexpr int ShardOf(std::string_view workflow_id) {
  std::uint64_t hash = 14695981039346656037ull;
  for (char c : workflow_id) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return static_cast<int>(hash % kShardCount);
}

}  // namespace reckon::storage
