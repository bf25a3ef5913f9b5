// ShardRouter: where a request about one workflow is served, in cluster mode (several servers
// on one PostgreSQL journal, each owning some shards; storage/shard.h). The service asks it
// before it handles a client request that names a workflow: a request for a workflow this
// server owns is handled here; one owned by another server is refused with Errc::kNotOwner and
// the owner's address, which the client follows (a redirect, never a forward: the owner is one
// hop away and the request goes there once); while a shard has no owner (a failover in
// progress), kUnavailable, which the client retries. A server that is not in a cluster has no
// router, and serves everything.
//
// Threads: asked on the server's executor.
#pragma once

#include <string>

namespace reckon::api {

struct Route {
  bool local = true;
  std::string owner_address;  // !local: where the owner serves; empty while nobody owns it
  std::string reason;         // !local: for people (the shard, its owner, what to do)
};

class ShardRouter {
 public:
  virtual ~ShardRouter() = default;
  virtual Route RouteOf(const std::string& workflow_id) const = 0;
};

}  // namespace reckon::api
