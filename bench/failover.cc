#include "bench/failover.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <thread>

#include "bench/bench_client.h"
#include "reckon/storage/postgres/pg.h"
#include "reckon/storage/postgres/shard_leases.h"
#include "reckon/storage/shard.h"

namespace reckon::bench {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

struct Sample {
  double new_owner_ms = -1;   // (a)
  double first_step_ms = -1;  // (b)
  double all_shards_ms = -1;  // (c)
  int victim_shards = 0;
  int load_completed = 0, load_failed = 0;
};

// The benchmark's own view of the journal: the lease table and the ticker's events.
class JournalProbe {
 public:
  static std::unique_ptr<JournalProbe> Open(const std::string& journal) {
    auto leases = storage::ShardLeases::Open(journal);
    auto conn = storage::PgConnection::Connect(journal);
    if (!leases || !conn) {
      std::fprintf(stderr, "journal probe: %s\n",
                   (leases ? conn.error() : leases.error()).ToString().c_str());
      return nullptr;
    }
    auto probe = std::unique_ptr<JournalProbe>(
        new JournalProbe(std::move(leases).value(), std::move(conn).value()));
    return probe;
  }

  std::vector<storage::ShardLease> Leases() {
    auto table = leases_->List();
    return table ? std::move(table).value() : std::vector<storage::ShardLease>{};
  }

  // Events of the latest run of `workflow_id` recorded after `after_us` (-1 on error).
  std::int64_t EventsAfter(const std::string& workflow_id, std::int64_t after_us) {
    storage::PgParams params;
    params.Add(workflow_id).Add(after_us);
    auto result = conn_.Query(
        "SELECT count(*) FROM events e JOIN runs r ON r.run_pk = e.run_pk "
        "WHERE r.workflow_id = $1::text AND e.recorded_at_us > $2::bigint",
        params);
    return result ? result.value().Int(0, 0) : -1;
  }

 private:
  JournalProbe(std::unique_ptr<storage::ShardLeases> leases, storage::PgConnection conn)
      : leases_(std::move(leases)), conn_(std::move(conn)) {}
  std::unique_ptr<storage::ShardLeases> leases_;
  storage::PgConnection conn_;
};

std::int64_t WallMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

double MsSince(SteadyClock::time_point t0) {
  return std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count();
}

// The client side of one repeat: the ticker and the load, on an io_context of their own thread.
struct Load {
  asio::io_context io{1};
  std::unique_ptr<BenchClient> client;
  std::atomic<int> completed{0}, failed{0};
  std::atomic<bool> stop{false};
  std::thread thread;

  static asio::awaitable<void> Ticker(Load* load, std::string id) {
    co_await load->client->RunOne(std::move(id), "ticker", R"({"ticks":100000,"ms":50})");
  }
  static asio::awaitable<void> Loop(Load* load, std::string prefix) {
    for (int i = 0; !load->stop; ++i) {
      const bool done =
          !(co_await load->client->RunOne(prefix + std::to_string(i), "ten_calls", "{}")).empty();
      if (load->stop) break;
      ++(done ? load->completed : load->failed);
    }
  }
  ~Load() {
    stop = true;
    if (thread.joinable()) {
      asio::post(io, [this] { client->Stop(); });
      thread.join();
    }
  }
};

std::optional<Sample> OneFailover(const FailoverOptions& options, int lease_ms, int repeat) {
  DeploymentOptions o = options.deployment;
  o.cluster_servers = options.servers;
  o.shard_lease_ms = lease_ms;
  o.quiet = false;  // the cluster's log lines (acquired, released, lost shards)
  o.database = "failover_" + std::to_string(lease_ms) + "_" + std::to_string(repeat);
  Deployment d = StartDeployment(o);
  if (!WaitBalanced(d.journal, options.servers, lease_ms, 60s)) return std::nullopt;
  auto probe = JournalProbe::Open(d.journal);
  if (!probe) return std::nullopt;

  Load load;
  bool connected = false;
  auto connect = [&]() -> asio::awaitable<void> {
    BenchClientOptions client_options{d.addresses, d.token, d.tls, /*patient=*/true};
    auto c = co_await BenchClient::Connect(load.io.get_executor(), std::move(client_options));
    if (c) load.client = std::move(c).value();
    connected = true;
  };
  asio::co_spawn(load.io, connect(), asio::detached);
  while (!connected) load.io.run_one();
  if (!load.client) return std::nullopt;
  const std::string ticker = "ticker-" + std::to_string(lease_ms) + "-" + std::to_string(repeat);
  const int shard = storage::ShardOf(ticker);
  asio::co_spawn(load.io, Load::Ticker(&load, ticker), asio::detached);
  for (int c = 0; c < options.load; ++c) {
    asio::co_spawn(load.io, Load::Loop(&load, ticker + "-load-" + std::to_string(c) + "-"),
                   asio::detached);
  }
  load.thread = std::thread([&load] { load.io.run(); });

  // The ticker is running (a few of its steps recorded), and the load has been on for a while.
  const auto warm_until = SteadyClock::now() + 1500ms;
  for (int i = 0; i < 3000 && probe->EventsAfter(ticker, 0) < 6; ++i) std::this_thread::sleep_for(10ms);
  if (probe->EventsAfter(ticker, 0) < 6) {
    std::fprintf(stderr, "the ticker %s did not run; see %s/server-*.log\n", ticker.c_str(),
                 o.dir.c_str());
    return std::nullopt;
  }
  // The kill's phase against the membership ticks (every lease/3) decides how long the lease
  // still runs; the start-up aligns the steps above with those ticks, so the repeats spread the
  // kill evenly over one period instead of sampling one phase.
  const auto period = std::chrono::milliseconds(lease_ms / 3);
  std::this_thread::sleep_until(warm_until + period * (2 * repeat + 1) / (2 * options.repeats));
  std::string victim_owner;
  std::set<int> victim_shards;
  std::size_t victim = d.servers.size();
  for (const auto& lease : probe->Leases()) {
    if (lease.shard != shard) continue;
    victim_owner = lease.owner;
    for (std::size_t i = 0; i < d.addresses.size(); ++i) {
      if (d.addresses[i] == lease.address) victim = i;
    }
  }
  for (const auto& lease : probe->Leases()) {
    if (lease.owner == victim_owner) victim_shards.insert(lease.shard);
  }
  if (victim == d.servers.size()) {
    std::fprintf(stderr, "no live server owns shard %d of %s\n", shard, ticker.c_str());
    return std::nullopt;
  }
  const int completed_before = load.completed.load();

  Sample sample;
  sample.victim_shards = static_cast<int>(victim_shards.size());
  const std::int64_t kill_us = WallMicros();
  const auto t0 = SteadyClock::now();
  (void)d.servers[victim].Kill(SIGKILL);
  while (MsSince(t0) < 30000 &&
         (sample.new_owner_ms < 0 || sample.first_step_ms < 0 || sample.all_shards_ms < 0)) {
    if (sample.first_step_ms < 0 && probe->EventsAfter(ticker, kill_us) > 0) {
      sample.first_step_ms = MsSince(t0);
    }
    if (sample.new_owner_ms < 0 || sample.all_shards_ms < 0) {
      const auto table = probe->Leases();
      int taken = 0;
      for (const auto& lease : table) {
        const bool live_elsewhere = !lease.owner.empty() && lease.owner != victim_owner &&
                                    lease.expires_in_ms > 0;
        if (!live_elsewhere) continue;
        if (lease.shard == shard && sample.new_owner_ms < 0) sample.new_owner_ms = MsSince(t0);
        if (victim_shards.count(lease.shard)) ++taken;
      }
      if (!table.empty() && taken == sample.victim_shards && sample.all_shards_ms < 0) {
        sample.all_shards_ms = MsSince(t0);
      }
    }
    std::this_thread::sleep_for(5ms);
  }
  // A little load after the takeover, to see that it goes on.
  std::this_thread::sleep_for(500ms);
  sample.load_completed = load.completed - completed_before;
  sample.load_failed = load.failed;
  std::printf("    lease %d ms, kill %d: SIGKILL %s (owner of shard %d of %s, and of %d shards in "
              "all): (a) new owner in the lease table after %.0f ms, (b) first step of the run "
              "committed by it after %.0f ms, (c) all %d shards owned again after %.0f ms; "
              "load: %d ten_calls completed since the kill, %d failed\n",
              lease_ms, repeat + 1, victim_owner.c_str(), shard, ticker.c_str(),
              sample.victim_shards, sample.new_owner_ms, sample.first_step_ms,
              sample.victim_shards, sample.all_shards_ms, sample.load_completed,
              sample.load_failed);
  if (sample.new_owner_ms < 0 || sample.first_step_ms < 0 || sample.all_shards_ms < 0) {
    std::fprintf(stderr, "the failover did not complete in 30 s; see %s/server-*.log\n",
                 o.dir.c_str());
    return std::nullopt;
  }
  return sample;
}

void PrintSpread(const char* what, std::vector<double> values) {
  std::sort(values.begin(), values.end());
  std::printf("      %-38s min %5.0f ms  median %5.0f ms  max %5.0f ms\n", what, values.front(),
              values[values.size() / 2], values.back());
}

}  // namespace

int RunFailover(FailoverOptions options) {
  std::printf("Failover: %d servers --cluster on one PostgreSQL, %d bench_worker process(es) "
              "connected to all, load: %d ten_calls loops and one ticker run (noop call + 50 ms "
              "durable timer); SIGKILL the owner of the ticker's shard\n",
              options.servers, options.deployment.workers, options.load);
  for (int lease_ms : options.lease_ms) {
    std::vector<double> owner, step, all;
    int failed = 0;
    for (int repeat = 0; repeat < options.repeats; ++repeat) {
      auto sample = OneFailover(options, lease_ms, repeat);
      if (!sample) return 1;
      owner.push_back(sample->new_owner_ms);
      step.push_back(sample->first_step_ms);
      all.push_back(sample->all_shards_ms);
      failed += sample->load_failed;
    }
    std::printf("  --shard-lease-ms %d, %d kills (target: first step < 5000 ms at 3000):\n",
                lease_ms, options.repeats);
    PrintSpread("(a) new owner in the lease table", owner);
    PrintSpread("(b) first step committed by it", step);
    PrintSpread("(c) all the victim's shards owned", all);
    std::printf("      load runs failed: %d\n", failed);
  }
  return 0;
}

}  // namespace reckon::bench
