#include "reckon/api/server/cluster_member.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>

#include "reckon/storage/shard.h"

namespace reckon::api {
namespace asio = boost::asio;
using std::chrono::steady_clock;
using storage::HeldShard;

namespace {

std::string ShardList(const std::vector<int>& shards) {
  std::string out = "[";
  for (int s : shards) out += (out.size() > 1 ? " " : "") + std::to_string(s);
  return out + "]";
}

std::vector<int> ShardsOf(const std::vector<HeldShard>& held) {
  std::vector<int> out;
  for (const HeldShard& h : held) out.push_back(h.shard);
  return out;
}

// A predicate over workflow ids: is the id's shard one of `shards`?
std::function<bool(const std::string&)> InShards(const std::vector<int>& shards) {
  std::set<int> set(shards.begin(), shards.end());
  return [set = std::move(set)](const std::string& workflow_id) {
    return set.count(storage::ShardOf(workflow_id)) > 0;
  };
}

}  // namespace

// What one round of the loop read from the database.
struct ClusterMember::Tick {
  std::optional<Error> failed;  // set when the heartbeat or the renewal failed
  std::vector<HeldShard> renewed;
  int live = 1;
  std::vector<storage::ShardLease> table;
};

ClusterMember::ClusterMember(asio::any_io_executor executor, Engine& engine,
                             storage::ShardFence& fence,
                             std::unique_ptr<storage::ShardLeases> leases, ClusterOptions options)
    : executor_(executor),
      engine_(engine),
      fence_(fence),
      leases_(std::move(leases)),
      options_(std::move(options)),
      wake_(executor),
      watch_(executor) {}

void ClusterMember::Identify(std::string server_id, std::string address) {
  options_.server_id = std::move(server_id);
  options_.address = std::move(address);
  fence_.SetServerId(options_.server_id);
}

ClusterMember::~ClusterMember() {
  db_.stop();
  db_.join();
}

template <class T, class F>
asio::awaitable<T> ClusterMember::OnDatabase(F work) {
  auto initiate = [this](auto handler, F work) {
    auto run = [this, work = std::move(work), handler = std::move(handler)]() mutable {
      T result = work();
      auto deliver = [handler = std::move(handler), result = std::move(result)]() mutable {
        std::move(handler)(std::move(result));
      };
      asio::post(executor_, std::move(deliver));
    };
    asio::post(db_, std::move(run));
  };
  return asio::async_initiate<decltype(asio::use_awaitable), void(T)>(
      std::move(initiate), asio::use_awaitable, std::move(work));
}

void ClusterMember::Stop() {
  stopped_ = true;
  wake_.cancel();
  watch_.cancel();
}

namespace {
constexpr const char* kUnrenewable =
    "no renewal of their leases succeeded for longer than a lease (the database is unreachable, "
    "or this server was paused), so another server may own them now";
}  // namespace

asio::awaitable<void> ClusterMember::Watchdog() {
  const auto period = std::max(options_.lease / 6, std::chrono::milliseconds(10));
  while (!stopped_) {
    watch_.expires_after(period);
    co_await watch_.async_wait(asio::as_tuple(asio::use_awaitable));
    if (stopped_) break;
    const std::vector<HeldShard> held = fence_.Held();
    if (held.empty() || steady_clock::now() - last_renewed_ <= options_.lease) continue;
    auto lost = Lose(ShardsOf(held), kUnrenewable);
    co_await std::move(lost);
  }
}

asio::awaitable<void> ClusterMember::Run() {
  const auto period = std::max(options_.lease / 3, std::chrono::milliseconds(10));
  last_renewed_ = steady_clock::now();
  bool first = true;
  spdlog::info("cluster: server '{}' joins (address {}, shard lease {} ms)", options_.server_id,
               options_.address, options_.lease.count());
  asio::co_spawn(executor_, Watchdog(), asio::detached);
  while (!stopped_) {
    const auto began = steady_clock::now();
    const std::vector<HeldShard> held = fence_.Held();
    auto read = [this, held]() {
      Tick tick;
      auto beat = leases_->Heartbeat(options_.server_id, options_.address);
      if (!beat) {
        tick.failed = beat.error();
        return tick;
      }
      auto renewed = leases_->Renew(options_.server_id, held, options_.lease);
      if (!renewed) {
        tick.failed = renewed.error();
        return tick;
      }
      tick.renewed = std::move(renewed).value();
      if (auto live = leases_->LiveServers(options_.lease); live) tick.live = live.value();
      if (auto table = leases_->List(); table) tick.table = std::move(table).value();
      return tick;
    };
    auto reading = OnDatabase<Tick>(std::move(read));
    Tick tick = co_await std::move(reading);
    if (stopped_) break;
    if (tick.failed) {
      spdlog::warn("cluster: cannot renew the shard leases: {}", tick.failed->ToString());
      // The watchdog gives the shards up once a lease passed without a renewal.
    } else {
      last_renewed_ = began;
      table_ = std::move(tick.table);
      std::vector<int> lost;
      for (const HeldShard& h : held) {
        const bool kept = std::any_of(tick.renewed.begin(), tick.renewed.end(), [&](const HeldShard& r) {
          return r.shard == h.shard && r.epoch == h.epoch;
        });
        if (!kept && fence_.Holds(h.shard)) lost.push_back(h.shard);
      }
      if (!lost.empty()) {
        auto losing = Lose(lost, "their leases were taken over by another server (this server "
                                 "was paused or cut off for longer than its lease)");
        co_await std::move(losing);
      }
      if (first) {
        first = false;  // one period to see the servers that start with this one
      } else {
        const int live = std::max(tick.live, 1);
        const int target = (storage::kShardCount + live - 1) / live;
        const int holding = static_cast<int>(fence_.Held().size());
        if (holding < target) {
          auto acquiring = Acquire(target - holding);
          co_await std::move(acquiring);
        } else if (holding > target) {
          auto giving = GiveBack(holding - target);
          co_await std::move(giving);
        }
      }
    }
    if (stopped_) break;
    wake_.expires_at(began + period);
    co_await wake_.async_wait(asio::as_tuple(asio::use_awaitable));
  }
}

asio::awaitable<void> ClusterMember::Lose(std::vector<int> shards, std::string why) {
  for (int shard : shards) fence_.Drop(shard);  // no write of ours lands there from now on
  auto releasing = engine_.Release(InShards(shards),
                                   "cluster: this server lost the shard of this workflow; ask "
                                   "any server again",
                                   options_.lease / 3);
  const int runs = co_await std::move(releasing);
  spdlog::warn("cluster: lost shards {}: {}; giving them up ({} run(s) let go)", ShardList(shards),
               why, runs);
}

asio::awaitable<void> ClusterMember::Acquire(int count) {
  auto take = [this, held = fence_.Held(), count]() {
    return leases_->Acquire(options_.server_id, options_.address, held, count, options_.lease);
  };
  auto taking = OnDatabase<Result<std::vector<HeldShard>>>(std::move(take));
  auto taken = co_await std::move(taking);
  if (!taken) {
    spdlog::warn("cluster: cannot take shards: {}", taken.error().ToString());
    co_return;
  }
  if (taken.value().empty()) co_return;
  std::string epochs;
  for (const HeldShard& h : taken.value()) {
    fence_.Hold(h.shard, h.epoch);
    epochs += (epochs.empty() ? "" : " ") + std::to_string(h.shard) + "@" + std::to_string(h.epoch);
  }
  const std::vector<int> shards = ShardsOf(taken.value());
  auto recovering = engine_.Recover(InShards(shards));
  auto recovered = co_await std::move(recovering);
  if (!recovered) {
    spdlog::error("cluster: acquired shards {} but cannot recover their runs: {}",
                  ShardList(shards), recovered.error().ToString());
    co_return;
  }
  spdlog::info("cluster: acquired shards {} (shard@epoch: {}); {} run(s) resumed; {} held",
               ShardList(shards), epochs, recovered.value(), fence_.Held().size());
}

asio::awaitable<void> ClusterMember::GiveBack(int count) {
  std::vector<HeldShard> held = fence_.Held();
  std::vector<HeldShard> chosen(held.end() - std::min<std::ptrdiff_t>(count, held.size()),
                                held.end());
  const std::vector<int> shards = ShardsOf(chosen);
  releasing_.insert(shards.begin(), shards.end());
  // Bounded, so that renewals go on: a batch still in flight afterwards is refused by the
  // fence once the shard is dropped below.
  auto releasing = engine_.Release(InShards(shards),
                                   "cluster: the shard of this workflow moved to another "
                                   "server; ask any server again",
                                   options_.lease / 3);
  const int runs = co_await std::move(releasing);
  for (int shard : shards) fence_.Drop(shard);
  auto give = [this, chosen]() { return leases_->Release(options_.server_id, chosen); };
  auto giving = OnDatabase<Result<void>>(std::move(give));
  auto given = co_await std::move(giving);
  for (int shard : shards) releasing_.erase(shard);
  if (!given) {
    spdlog::warn("cluster: cannot release shards {} (they expire by themselves): {}",
                 ShardList(shards), given.error().ToString());
  }
  spdlog::info("cluster: released shards {} to rebalance ({} run(s) let go); {} held",
               ShardList(shards), runs, fence_.Held().size());
}

void ClusterMember::Leave() {
  db_.join();
  const std::vector<HeldShard> held = fence_.Held();
  for (const HeldShard& h : held) fence_.Drop(h.shard);
  auto released = leases_->Release(options_.server_id, held);
  auto left = leases_->Leave(options_.server_id);
  if (!released || !left) {
    spdlog::warn("cluster: could not give the shards back on leaving ({}); the others take them "
                 "over once the leases expire",
                 (!released ? released.error() : left.error()).ToString());
    return;
  }
  spdlog::info("cluster: server '{}' left; released shards {}", options_.server_id,
               ShardList(ShardsOf(held)));
}

Route ClusterMember::RouteOf(const std::string& workflow_id) const {
  const int shard = storage::ShardOf(workflow_id);
  if (fence_.Holds(shard) && releasing_.count(shard) == 0) return Route{};
  Route route;
  route.local = false;
  const std::string where = "workflow '" + workflow_id + "' is in shard " + std::to_string(shard);
  if (static_cast<std::size_t>(shard) < table_.size()) {
    const storage::ShardLease& lease = table_[shard];
    if (!lease.owner.empty() && lease.owner != options_.server_id && lease.expires_in_ms > 0) {
      route.owner_address = lease.address;
      route.reason = "cluster: " + where + ", owned by server '" + lease.owner + "' at " +
                     lease.address + "; send the request there (reckon follows by itself)";
      return route;
    }
  }
  route.reason = "cluster: " + where + ", which has no owner right now (a failover or a "
                 "rebalance is under way); retry in a few seconds";
  return route;
}

}  // namespace reckon::api
