// The PostgreSQL journal through kills of its server (docs/TESTING.md, "PostgreSQL kill").
//
// A private PostgreSQL 15 server (tests/support/postgres_server.h: fsync = on and
// synchronous_commit = on on its command line, checked here with SHOW; the journal's session
// sets synchronous_commit = on again) holds one database per seed. A JournalWorkload
// (storage/testing/journal_workload.h, the same one the SQLite power-loss test runs) appends
// to it, and the postmaster and all its backends are killed with SIGKILL, over and over, at a
// point the seed draws:
//   - after a number of acknowledged appends (nothing in flight: the next append must fail
//     with kUnavailable);
//   - from a timer thread, after a drawn delay, while the workload appends as fast as it can
//     (the kill usually lands inside an append: its statements, its COMMIT, or the wait for
//     COMMIT's reply);
//   - from a timer started before the journal is reopened, so it may land while the journal
//     connects, takes its lock or prepares its statements.
// After each kill the server is started again on the same data directory (it recovers from
// its WAL) and the journal reopened; then every acknowledged append must be there exactly,
// the one in flight whole or not at all, each run's events numbered 1..n with next_seq after
// the last, its operations and the outbox as acknowledged, nothing else present,
// IntegrityCheck "ok", and a new append must succeed. Every append the kill failed must have
// failed with kUnavailable (the engine stops on it; any other code would tell it "not
// written").
//
// This is a process kill, not a power cut: the machine's page cache survives, so it shows
// that PostgreSQL acknowledges a COMMIT only after its WAL is written and recovers it, and
// that the journal neither acknowledges early nor leaves half a transaction; it cannot show
// what an fsync that lies would lose (docs/TESTING.md says why).
//
// Scale, from the environment: RECKON_PG_KILL_SEEDS seeds (default 2) of RECKON_PG_KILL_KILLS
// kills each (default 4); RECKON_PG_KILL_SEED=N runs seed N alone. The heavy tier (ctest label
// `heavy`, storage/postgres/CMakeLists.txt) runs 25 seeds of 16. A seed fixes the workload and
// where the kill is aimed; where a timed kill lands depends on the machine, so a failing seed
// reruns the same appends and kill plan, but may need a few reruns to hit the same instant.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "reckon/storage/postgres/pg.h"
#include "reckon/storage/postgres/postgres_journal.h"
#include "reckon/storage/testing/journal_workload.h"
#include "tests/support/postgres_server.h"

namespace reckon::storage {
namespace {

using namespace std::chrono_literals;

std::int64_t FromEnv(const char* name, std::int64_t fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::atoll(value) : fallback;
}

struct KillReport {
  int kills = 0;
  int kills_between_appends = 0;
  int kills_timed = 0;
  int kills_while_opening = 0;  // the journal failed to open: the kill landed in its open
  int failed_appends = 0;       // appends the kill failed (each with kUnavailable)
  std::int64_t acknowledged = 0;
  std::int64_t adopted = 0;         // appends in flight found whole after the restart
  std::int64_t lost_in_flight = 0;  // appends in flight found absent
  std::int64_t checked_runs = 0;    // runs checked event by event, summed over the checks
};

Result<std::string> Show(PgConnection& conn, const std::string& setting) {
  RECKON_TRY(PgResult result, conn.Query("SHOW " + setting));
  if (result.rows() != 1) return Err(Errc::kInternal, "SHOW " + setting + " returned no row");
  return std::string(result.Text(0, 0));
}

// The server must run as the file comment says, or the test proves nothing.
Result<void> RequireDurableSettings(const std::string& conninfo) {
  RECKON_TRY(PgConnection conn, PgConnection::Connect(conninfo));
  for (const char* setting : {"fsync", "synchronous_commit", "full_page_writes"}) {
    RECKON_TRY(std::string value, Show(conn, setting));
    if (value != "on") {
      return Err(Errc::kFailedPrecondition, std::string(setting) + " is '" + value +
                                                "' on the test server; the kill test needs on");
    }
  }
  return Ok();
}

Result<std::set<std::string>> OutboxIds(const std::string& conninfo) {
  RECKON_TRY(PgConnection conn, PgConnection::Connect(conninfo));
  RECKON_TRY(PgResult rows, conn.Query("SELECT message_id FROM outbox"));
  std::set<std::string> ids;
  for (int i = 0; i < rows.rows(); ++i) ids.insert(std::string(rows.Text(i, 0)));
  return ids;
}

// A failed append after a kill must say kUnavailable: "unknown, stop", never "not written".
Result<void> RequireUnavailable(const Error& error, const char* what) {
  if (error.code() == Errc::kUnavailable) return Ok();
  return Err(Errc::kInternal, std::string(what) + " failed with " +
                                  std::string(ErrcName(error.code())) +
                                  " instead of kUnavailable: " + error.ToString());
}

// SIGKILLs the server after `delay`, on a thread of its own. The test's thread leaves the
// server alone until Join() (PostgresServer is not thread-safe), and restarts it itself: the
// server dies with the thread that started it.
class KillTimer {
 public:
  KillTimer(testing::PostgresServer& server, std::chrono::microseconds delay)
      : thread_([&server, delay, this] {
          std::this_thread::sleep_for(delay);
          result_ = server.Crash();
        }) {}
  Result<void> Join() {
    thread_.join();
    return result_;
  }

 private:
  Result<void> result_ = Ok();
  std::thread thread_;
};

class KillLoop {
 public:
  KillLoop(testing::PostgresServer& server, std::string conninfo, std::uint64_t seed)
      : server_(server),
        conninfo_(std::move(conninfo)),
        rng_(seed),
        workload_(seed * 0x9E3779B97F4A7C15ull + 1) {}

  Result<void> Open() {
    RECKON_TRY(journal_, OpenPostgresJournal(conninfo_));
    return Ok();
  }

  // One kill, the restart, and the checks after it.
  Result<void> KillOnce() {
    const auto mode = rng_() % 8;
    if (mode < 3) {
      RECKON_TRY(KillBetweenAppends(static_cast<int>(rng_() % 25)));
    } else if (mode < 7) {
      RECKON_TRY(KillTimed(std::chrono::microseconds(rng_() % 60000), /*before_open=*/false));
    } else {
      RECKON_TRY(KillTimed(std::chrono::microseconds(rng_() % 8000), /*before_open=*/true));
    }
    ++report_.kills;
    journal_.reset();  // its session died with the server
    if (auto restarted = server_.Restart(); !restarted) {
      return restarted.error().WithContext("restarting PostgreSQL after the kill:\n" +
                                           server_.LogTail());
    }
    return CheckAfterRestart();
  }

  KillReport report() const {
    KillReport out = report_;
    out.acknowledged = workload_.acknowledged();
    out.adopted = workload_.adopted();
    out.lost_in_flight = workload_.lost_in_flight();
    return out;
  }

 private:
  Result<void> KillBetweenAppends(int appends) {
    for (int i = 0; i < appends; ++i) {
      RECKON_TRY(workload_.Step(*journal_));
    }
    RECKON_TRY(server_.Crash());
    ++report_.kills_between_appends;
    auto after = workload_.Step(*journal_);
    if (after) return Err(Errc::kInternal, "an append after the kill was acknowledged");
    ++report_.failed_appends;
    return RequireUnavailable(after.error(), "the append after the kill");
  }

  // Appends until one fails, the timer's kill having landed (at most 5000 appends, then the
  // kill is waited for). Failures before the kill fail the test.
  Result<void> KillTimed(std::chrono::microseconds delay, bool before_open) {
    ++report_.kills_timed;
    if (before_open) journal_.reset();
    KillTimer timer(server_, delay);
    Result<void> outcome = TimedAppends(before_open);
    RECKON_TRY(timer.Join());
    if (!outcome) return outcome;
    if (journal_ == nullptr) return Ok();  // the kill landed in the open
    // The timer fired after the last append: the next one meets a dead server.
    auto after = workload_.Step(*journal_);
    if (after) return Err(Errc::kInternal, "an append after the kill was acknowledged");
    ++report_.failed_appends;
    return RequireUnavailable(after.error(), "the append after the kill");
  }

  Result<void> TimedAppends(bool open_first) {
    if (open_first) {
      auto opened = OpenPostgresJournal(conninfo_);
      if (!opened) {
        ++report_.kills_while_opening;
        return RequireUnavailable(opened.error(), "opening the journal during the kill");
      }
      journal_ = std::move(opened).value();
    }
    for (int i = 0; i < 5000; ++i) {
      auto stepped = workload_.Step(*journal_);
      if (stepped) continue;
      ++report_.failed_appends;
      RECKON_TRY(RequireUnavailable(stepped.error(), "the append the kill interrupted"));
      journal_.reset();
      return Ok();
    }
    return Ok();
  }

  Result<void> CheckAfterRestart() {
    RECKON_TRY(Open());
    RECKON_TRY(auto outbox, OutboxIds(conninfo_));
    RECKON_TRY(workload_.Check(*journal_, outbox));
    RECKON_TRY(auto runs, journal_->ListRuns());
    report_.checked_runs += static_cast<std::int64_t>(runs.size());
    RECKON_TRY(std::string integrity, journal_->IntegrityCheck());
    if (integrity != "ok") return Err(Errc::kCorruption, "IntegrityCheck: " + integrity);
    if (auto stepped = workload_.Step(*journal_); !stepped) {
      return stepped.error().WithContext("the first append after the restart");
    }
    return Ok();
  }

  testing::PostgresServer& server_;
  const std::string conninfo_;
  std::mt19937_64 rng_;
  JournalWorkload workload_;
  std::unique_ptr<Journal> journal_;
  KillReport report_;
};

std::vector<std::uint64_t> Seeds() {
  if (std::int64_t one = FromEnv("RECKON_PG_KILL_SEED", 0); one != 0) {
    return {static_cast<std::uint64_t>(one)};
  }
  std::vector<std::uint64_t> seeds;
  for (std::int64_t s = 1; s <= FromEnv("RECKON_PG_KILL_SEEDS", 2); ++s) seeds.push_back(s);
  return seeds;
}

// One seed: a fresh database and `kills` kills. The error names the seed and the kill.
Result<KillReport> RunKills(testing::PostgresServer& server, std::uint64_t seed, int kills) {
  RECKON_TRY(std::string conninfo, server.CreateDatabase("kill_" + std::to_string(seed)));
  KillLoop loop(server, conninfo, seed);
  auto where = [&](const Error& e, int kill) {
    return e.WithContext("seed " + std::to_string(seed) + ", kill " + std::to_string(kill) +
                         " (rerun: RECKON_PG_KILL_SEED=" + std::to_string(seed) + ")");
  };
  if (auto opened = loop.Open(); !opened) return where(opened.error(), 0);
  for (int kill = 0; kill < kills; ++kill) {
    if (auto killed = loop.KillOnce(); !killed) return where(killed.error(), kill);
  }
  return loop.report();
}

TEST(PostgresKillTest, AcknowledgedAppendsSurviveEveryKill) {
  auto server = testing::PostgresServer::Start();
  ASSERT_TRUE(server) << server.error().ToString();
  const auto settings = RequireDurableSettings(server.value()->ConnectionString("postgres"));
  ASSERT_TRUE(settings) << settings.error().ToString();
  const int kills = static_cast<int>(FromEnv("RECKON_PG_KILL_KILLS", 4));
  const auto started = std::chrono::steady_clock::now();
  KillReport total;
  for (std::uint64_t seed : Seeds()) {
    auto report = RunKills(*server.value(), seed, kills);
    ASSERT_TRUE(report) << report.error().ToString() << "\nserver log:\n"
                        << server.value()->LogTail();
    const KillReport& r = report.value();
    total.kills += r.kills;
    total.kills_between_appends += r.kills_between_appends;
    total.kills_timed += r.kills_timed;
    total.kills_while_opening += r.kills_while_opening;
    total.failed_appends += r.failed_appends;
    total.acknowledged += r.acknowledged;
    total.adopted += r.adopted;
    total.lost_in_flight += r.lost_in_flight;
    total.checked_runs += r.checked_runs;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("postgres kill: %zu seeds, %d kills (%d between appends, %d timed, %d of them "
              "while the journal opened), %d appends failed with kUnavailable; %lld acknowledged "
              "transactions, in flight at a kill: %lld found whole, %lld found absent; %lld "
              "run checks; %.1f s\n",
              Seeds().size(), total.kills, total.kills_between_appends, total.kills_timed,
              total.kills_while_opening, total.failed_appends,
              static_cast<long long>(total.acknowledged), static_cast<long long>(total.adopted),
              static_cast<long long>(total.lost_in_flight),
              static_cast<long long>(total.checked_runs), seconds);
}

}  // namespace
}  // namespace reckon::storage
