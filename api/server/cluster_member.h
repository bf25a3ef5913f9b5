// ClusterMember: one server's part in a cluster (several `reckon server --cluster` processes on
// one PostgreSQL journal; docs/ARCHITECTURE.md, decision "Several servers"). It runs the
// membership loop and answers where a workflow is served (ShardRouter).
//
// The loop, every lease/3 (the lease: ClusterOptions::lease):
//   1. beats (reckon_servers), renews the leases this server holds, and reads the lease table;
//   2. a shard whose lease was taken over meanwhile (this server was paused, or cut off from
//      the database past its lease) is lost: its fence entry is dropped at once, then the
//      engine lets its runs go (Engine::Release); "cluster: lost shards ..." is logged;
//      a server that cannot renew for a whole lease treats every shard as lost the same way, by
//      a watchdog of its own, so that a database call hanging on a dead network (libpq gives
//      up only after its TCP timeouts, ~30 s) does not keep it acting on shards others took;
//   3. target = ceil(64 / live servers). Below it, the server takes free or expired shards
//      (epoch + 1), holds them in the fence, then recovers their running runs
//      (Engine::Recover(owns)), as a restart would: attempts in flight become unknown outcomes
//      and are reconciled, timers are re-armed. Above it, it gives shards back: the router
//      stops serving them, the engine lets their runs go and waits for their batches in
//      flight, the fence drops them, and only then is the lease row released.
// A starting server beats once and waits one period before it takes shards, so that servers
// started together see each other and do not first take everything.
//
// Safety rests on the epoch fence in every append (storage/shard_fence.h), not on timing: the
// loop only decides who should act. Database calls run on a thread of their own, so a slow
// database never stalls the engine's executor.
//
// Ownership: owns the lease store and its thread; references the engine and the fence, which
// outlive it. Threads: Run(), RouteOf() and Stop() on the engine's executor; Leave() after the
// executor stopped.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "reckon/api/server/shard_router.h"
#include "reckon/engine/engine.h"
#include "reckon/storage/postgres/shard_leases.h"
#include "reckon/storage/shard_fence.h"

namespace reckon::api {

struct ClusterOptions {
  std::string server_id;  // the owner name in the lease rows; unique per server process
  std::string address;    // HOST:PORT where clients reach this server (redirects name it)
  std::chrono::milliseconds lease{3000};
};

class ClusterMember final : public ShardRouter {
 public:
  // `options.server_id` and `address` may be set later, by Identify(), before Run().
  ClusterMember(boost::asio::any_io_executor executor, Engine& engine,
                storage::ShardFence& fence, std::unique_ptr<storage::ShardLeases> leases,
                ClusterOptions options);
  // Names this server (the fence too): its id and the address redirects send clients to.
  void Identify(std::string server_id, std::string address);
  ~ClusterMember() override;
  ClusterMember(const ClusterMember&) = delete;
  ClusterMember& operator=(const ClusterMember&) = delete;

  // The membership loop; returns after Stop().
  boost::asio::awaitable<void> Run();
  void Stop();
  // A graceful exit, once the executor stopped: gives every held shard back and deletes this
  // server's heartbeat, so that the others take its shards over at once instead of after the
  // lease. Blocking.
  void Leave();

  Route RouteOf(const std::string& workflow_id) const override;

 private:
  struct Tick;
  // Runs `work` on the database thread; resumes on the executor.
  template <class T, class F>
  boost::asio::awaitable<T> OnDatabase(F work);
  // Parameters by value: a coroutine outlives the temporaries of its call.
  boost::asio::awaitable<void> Lose(std::vector<int> shards, std::string why);
  // Every lease/6: if no renewal succeeded for a whole lease, gives up every shard held.
  boost::asio::awaitable<void> Watchdog();
  boost::asio::awaitable<void> Acquire(int count);
  boost::asio::awaitable<void> GiveBack(int count);

  boost::asio::any_io_executor executor_;
  Engine& engine_;
  storage::ShardFence& fence_;
  std::unique_ptr<storage::ShardLeases> leases_;  // used on db_ only
  ClusterOptions options_;
  boost::asio::thread_pool db_{1};
  boost::asio::steady_timer wake_;
  boost::asio::steady_timer watch_;
  bool stopped_ = false;
  std::vector<storage::ShardLease> table_;  // as last read, for RouteOf
  std::set<int> releasing_;                 // being given back: served by nobody meanwhile
  std::chrono::steady_clock::time_point last_renewed_;
};

}  // namespace reckon::api
