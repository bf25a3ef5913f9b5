// The embedded engine over a PostgreSQL journal whose server is SIGKILLed mid-run, over and
// over (docs/TESTING.md, "PostgreSQL kill"). The server is private to the test
// (tests/support/postgres_server.h: fsync = on, synchronous_commit = on); each seed has a
// database of its own, a provider that does not deduplicate (a blind retry of a payment would
// show as a second effect) and kRuns runs of one payment each; every third payment is over
// the contract's approval threshold, so its run waits for a person, who approves it in some
// lives (drawn) and in the last.
//
// Each process life is built by hand as `reckon server` runs it (host/testing/engine_life.h:
// commits on their own thread, a companion connection for reads). The seed draws where the
// server dies in each life: from the provider's hook at the n-th call (the payment commits at
// the provider while its outcome can no longer be journaled), or from a timer thread at a
// drawn delay (during recovery, a commit, a read, or an idle moment); and what dies: the
// postmaster with every child (the test restarts it on the same data directory), or one
// child (the server ends every session and recovers by itself, as after an OOM kill). The
// engine must stop (failed()) rather than go on as if an append it could not confirm had not
// been written; the life ends, the server is back, and the journal must hold
// every event the engine reported durable and pass IntegrityCheck, and no payment may have
// taken effect before its grant was journaled. Each life ends once every run is completed or
// waits for approval (or the engine stopped). At the end, one more life without a kill, in
// which the person approves what waits: every run completed, and each payment took effect
// exactly once.
//
// Scale: RECKON_ENGINE_PG_KILL_SEEDS seeds (default 3; the heavy tier runs 30);
// RECKON_ENGINE_PG_KILL_SEED=N runs seed N alone. A seed fixes the kill plan; where a kill
// lands also depends on the machine's timing, so rerun a failing seed a few times.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "reckon/engine/run_wait.h"
#include "reckon/storage/postgres/postgres_journal.h"
#include "reckon/host/testing/engine_life.h"
#include "reckon/testkit/fake_provider.h"
#include "reckon/host/testing/fast_contracts.h"
#include "reckon/host/testing/journal_view.h"
#include "reckon/host/testing/payment_audit.h"
#include "reckon/host/testing/test_workflows.h"
#include "tests/support/postgres_kill.h"
#include "tests/support/postgres_server.h"

namespace reckon {
namespace {

using namespace std::chrono_literals;
using namespace reckon::testing;
using storage::Journal;
using Mode = storage::PostgresJournalOptions::Mode;

constexpr char kPay[] = "pay";
constexpr int kRuns = 6;
constexpr int kMinKills = 4;   // a seed kills at least so often, even once its runs are done
constexpr int kMaxLives = 60;  // a seed that needs more lives than this is stuck
constexpr auto kWait = 20s;    // a watchdog against a hang, not a timing assertion

std::int64_t FromEnv(const char* name, std::int64_t fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::atoll(value) : fallback;
}

std::string RunId(int i) { return "wf-" + std::to_string(i); }
// Every third run pays over the approval threshold: it waits for a person first.
bool NeedsApproval(int i) { return i % 3 == 2; }
boost::json::value PayInput(int i) {
  const std::int64_t cents = NeedsApproval(i) ? 25000 : 100;
  return CallOnceInput(kPay, FastInput("acct-" + std::to_string(i), cents));
}

// A payment that does not deduplicate, approved by a person above 10000 cents.
ToolContract PayContract() {
  ToolContract c = FastContract(kPay, SideEffect::kNonRepeatableWrite);
  c.approval = {.kind = ApprovalKind::kWhen,
                .when = {{"amount_cents", CompareOp::kGreater, 10000}},
                .grant_ttl = 3600s};
  return c;
}

// Opens the journal, waiting (at most 60 s) while the server refuses sessions because it
// recovers from a kill of one of its children.
std::unique_ptr<Journal> OpenJournal(const std::string& conninfo, Mode mode) {
  storage::PostgresJournalOptions options;
  options.mode = mode;
  const auto give_up = std::chrono::steady_clock::now() + 60s;
  for (;;) {
    auto opened = storage::OpenPostgresJournal(conninfo, options);
    if (opened) return std::move(opened).value();
    if (opened.error().code() != Errc::kUnavailable ||
        std::chrono::steady_clock::now() > give_up) {
      throw std::runtime_error(opened.error().ToString());
    }
    std::this_thread::sleep_for(20ms);
  }
}

// The provider, its tool, the workflow and the database of one seed, shared by its lives. The
// provider stands outside the machine: its ledger survives every kill.
struct World {
  World(PostgresServer& server, std::string conninfo)
      : server(server), conninfo(std::move(conninfo)) {
    (void)tools.Register(testkit::ProviderTool(PayContract(), provider));
    (void)workflows.Register(kCallOnce, CallOnce);
  }
  PostgresServer& server;
  const std::string conninfo;
  testkit::FakeProvider provider{/*dedup=*/false};
  ToolRegistry tools;
  WorkflowRegistry workflows;
};

// The journals of one process life: the connection that commits and a companion for reads.
struct LifeJournals {
  explicit LifeJournals(World& world)
      : journal(OpenJournal(world.conninfo, Mode::kOwner)),
        reader(OpenJournal(world.conninfo, Mode::kCompanion)) {}
  std::unique_ptr<Journal> journal;
  std::unique_ptr<Journal> reader;
};

// One process life; the journals are opened first and closed last.
class Life : public LifeJournals, public EngineLife {
 public:
  explicit Life(World& world)
      : LifeJournals(world), EngineLife(*journal, *reader, world.workflows, world.tools, kWait) {}

  // Recovers, starts every run (a start is idempotent, as a client that got an error retries
  // it), and runs until each is completed or waits for approval, or the engine stops. With
  // `grant`, a person then approves every waiting payment, and it runs on until the same.
  // True: all completed.
  bool RecoverAndRun(bool grant) {
    auto recovered = Spawn(engine->Recover());
    if (!RunUntil([&] { return recovered->has_value(); })) {
      throw std::runtime_error("the engine did not recover");
    }
    std::vector<std::shared_ptr<std::optional<Result<storage::RunRef>>>> starts;
    for (int i = 0; i < kRuns; ++i) {
      starts.push_back(Spawn(engine->Start(RunId(i), kCallOnce, PayInput(i))));
    }
    std::vector<std::shared_ptr<std::optional<Result<void>>>> decisions;
    auto settled = [&] {
      for (const auto& start : starts) {
        if (!start->has_value()) return false;
      }
      for (const auto& decision : decisions) {
        if (!decision->has_value()) return false;
      }
      return engine->failed() || Quiet(/*approvals_count=*/true);
    };
    if (!RunUntil(settled)) {
      throw std::runtime_error("the engine neither settled its runs nor stopped");
    }
    if (grant && !engine->failed()) {
      for (int i = 0; i < kRuns; ++i) {
        auto run = engine->Describe(RunId(i));
        if (!run || run->wait.kind != WaitKind::kApproval) continue;
        ApprovalDecision yes;
        yes.operation_id = run->wait.detail;
        yes.granted = true;
        yes.decided_by = "kill-test";
        decisions.push_back(Spawn(engine->DecideApproval(RunId(i), std::move(yes))));
      }
      if (!RunUntil(settled)) {
        throw std::runtime_error("the engine neither settled its approved runs nor stopped");
      }
    }
    return !engine->failed() && Quiet(/*approvals_count=*/false);
  }

 private:
  // Nothing for the engine to do by itself: every run completed (or, if `approvals_count`,
  // waits for approval).
  bool Quiet(bool approvals_count) {
    if (engine->BusyRuns() != 0) return false;
    for (int i = 0; i < kRuns; ++i) {
      // None: it finished in an earlier life, or (after a kill that the idle engine has not
      // met) the read failed (Engine::Describe logs it). So a life's verdict may be
      // optimistic after a kill; the last life, without a kill, and the ledger check decide.
      auto run = engine->Describe(RunId(i));
      if (!run || run->status == storage::RunStatus::kCompleted) continue;
      if (approvals_count && run->wait.kind == WaitKind::kApproval) continue;
      return false;
    }
    return true;
  }
};


// Payments the provider committed whose outcome the journal does not hold: the kill took the
// outcome, and a later life must learn it by a lookup, not by paying again.
int OutcomesLost(World& world, Journal& journal) {
  std::vector<std::string> ids;
  for (int i = 0; i < kRuns; ++i) ids.push_back(RunId(i));
  return testing::CountOutcomesLost(journal, ids, world.provider);
}

// A payment over the threshold takes effect only once its approval is in the journal.
std::string CheckNoPaymentWithoutGrant(World& world, Journal& journal) {
  for (int i = 0; i < kRuns; ++i) {
    if (!NeedsApproval(i)) continue;
    auto run = journal.FindLatestRun(RunId(i));
    if (!run) return run.error().ToString();
    if (!run.value()) continue;
    auto events = journal.ReadEvents(run.value()->ref);
    if (!events) return events.error().ToString();
    for (const auto& started : BodiesOf<storage::AttemptStarted>(events.value())) {
      if (started.approval_id.empty() ||
          BodiesOf<storage::ApprovalGranted>(events.value(), started.operation_id).empty()) {
        return RunId(i) + " started a payment over the threshold without a journaled grant: " +
               EventNames(events.value());
      }
    }
    for (const auto& asked : BodiesOf<storage::ApprovalRequested>(events.value())) {
      if (BodiesOf<storage::ApprovalGranted>(events.value(), asked.operation_id).empty() &&
          world.provider.effects(asked.operation_id) != 0) {
        return RunId(i) + "'s payment took effect before its approval was journaled";
      }
    }
  }
  return "";
}

// After a restart: every event the engine reported durable is in the journal, the journal
// passes IntegrityCheck, and no payment went ahead of its approval. Returns the first
// violation ("" if none).
std::string CheckAcknowledged(World& world, const std::map<std::string, std::int64_t>& acked,
                              int& outcomes_lost) {
  auto journal = OpenJournal(world.conninfo, Mode::kOwner);
  for (const auto& [workflow_id, events] : acked) {
    auto run = journal->FindLatestRun(workflow_id);
    if (!run) return run.error().ToString();
    const std::int64_t stored = run.value() ? run.value()->next_seq - 1 : 0;
    if (stored < events) {
      return workflow_id + " has " + std::to_string(stored) + " events in the journal where " +
             "the engine saw " + std::to_string(events) + " committed";
    }
  }
  auto integrity = journal->IntegrityCheck();
  if (!integrity) return integrity.error().ToString();
  if (integrity.value() != "ok") return "IntegrityCheck: " + integrity.value();
  if (std::string bad = CheckNoPaymentWithoutGrant(world, *journal); !bad.empty()) return bad;
  outcomes_lost = OutcomesLost(world, *journal);
  return "";
}

// Every run completed, and its payment took effect exactly once at the provider
// (host/testing/payment_audit.h). Returns the first violation, or "".
std::string CheckEachPaymentOnce(World& world) {
  auto journal = OpenJournal(world.conninfo, Mode::kOwner);
  std::vector<std::string> ids;
  for (int i = 0; i < kRuns; ++i) ids.push_back(RunId(i));
  return testing::CheckEachPaymentOnce(*journal, ids, world.provider);
}

struct Totals {
  int kills = 0;
  int kills_server = 0;   // the postmaster and every child, then a restart by the test
  int kills_child = 0;    // one child; the server reset and recovered by itself
  int kills_at_call = 0;  // from the provider's hook, as a payment reached it
  int kills_timed = 0;
  int stops = 0;          // lives in which the engine stopped (failed()) after a kill
  int lives = 0;
  int calls = 0;          // provider calls
  int lookups = 0;        // reconciliations: the engine asked the provider what happened
  int outcomes_lost = 0;  // kills after which a committed payment's outcome was not journaled
};

// One life that ends in a kill drawn from `rng`. Returns whether every run completed in it,
// and fills `acknowledged`. A kill of the whole server is followed by its restart.
bool LifeWithKill(World& world, std::mt19937_64& rng, Totals& totals,
                  std::map<std::string, std::int64_t>& acknowledged) {
  const bool at_call = rng() % 2 == 0;
  const Kill kill = rng() % 3 == 0 ? Kill::kChild : Kill::kServer;
  const auto pick = static_cast<std::size_t>(rng());
  const auto nth_call = static_cast<std::size_t>(1 + rng() % 3);
  const auto delay = std::chrono::microseconds(rng() % 15000);
  const bool grant = rng() % 2 == 0;  // a person approves what waits, in this life
  std::optional<KillTimer> timer;
  bool killed = false;
  std::string kill_error;
  bool done = false;
  {
    Life life(world);
    if (at_call) {
      const std::size_t calls_before = world.provider.calls().size();
      // The hook runs inside the tool's coroutine: it records a failure, never throws.
      world.provider.OnCall(
          [&world, &killed, &kill_error, kill, pick, calls_before, nth_call](const testkit::CallRecord&) {
            if (killed || world.provider.calls().size() < calls_before + nth_call) return;
            killed = true;
            if (auto now = KillNow(world.server, kill, pick); !now) {
              kill_error = now.error().ToString();
            }
          });
    } else {
      timer.emplace(world.server, kill, pick, delay);
    }
    done = life.RecoverAndRun(/*grant=*/grant);
    world.provider.OnCall({});
    if (life.engine->failed()) ++totals.stops;
    acknowledged = life.acknowledged;
  }
  if (!kill_error.empty()) throw std::runtime_error("killing PostgreSQL: " + kill_error);
  if (timer) {
    if (auto joined = timer->Join(); !joined) {
      throw std::runtime_error("killing PostgreSQL: " + joined.error().ToString());
    }
    ++totals.kills_timed;
  } else if (killed) {
    ++totals.kills_at_call;
  } else {
    // No n-th call in this life (the runs were done): kill it idle, as the timer would.
    if (auto idle = KillNow(world.server, kill, pick); !idle) {
      throw std::runtime_error("killing PostgreSQL: " + idle.error().ToString());
    }
    ++totals.kills_timed;
  }
  ++totals.kills;
  ++(kill == Kill::kServer ? totals.kills_server : totals.kills_child);
  if (kill == Kill::kServer) {
    if (auto restarted = world.server.Restart(); !restarted) {
      throw std::runtime_error("restarting PostgreSQL: " + restarted.error().ToString());
    }
  }
  return done;
}

// One seed: lives with kills until every run is completed (at least kMinKills of them: a life
// after the runs are done recovers them and must do nothing), then one life without a kill.
// Returns the first violation, naming the seed and life, or "".
std::string RunSeed(PostgresServer& server, std::uint64_t seed, Totals& totals) {
  const std::string where = "seed " + std::to_string(seed) +
                            " (rerun: RECKON_ENGINE_PG_KILL_SEED=" + std::to_string(seed) + ")";
  auto conninfo = server.CreateDatabase("engine_kill_" + std::to_string(seed));
  if (!conninfo) return where + ": " + conninfo.error().ToString();
  World world(server, conninfo.value());
  std::mt19937_64 rng(seed);
  try {
    bool done = false;
    for (int life_no = 0; life_no < kMaxLives && (!done || life_no < kMinKills); ++life_no) {
      std::map<std::string, std::int64_t> acknowledged;
      done = LifeWithKill(world, rng, totals, acknowledged);
      ++totals.lives;
      int lost = 0;
      if (std::string bad = CheckAcknowledged(world, acknowledged, lost); !bad.empty()) {
        return where + ", after life " + std::to_string(life_no) + ": " + bad;
      }
      totals.outcomes_lost += lost > 0 ? 1 : 0;
    }
    if (!done) {
      return where + ": the runs did not complete in " + std::to_string(kMaxLives) + " lives";
    }
    {
      Life life(world);  // one more life, no kill: nothing left to do, nothing done twice
      if (!life.RecoverAndRun(/*grant=*/true)) {
        return where + ": the last life did not complete every run";
      }
      ++totals.lives;
    }
    if (std::string bad = CheckEachPaymentOnce(world); !bad.empty()) return where + ": " + bad;
  } catch (const std::exception& e) {  // a journal that does not open, an engine that hangs
    return where + ": " + e.what();
  }
  totals.calls += static_cast<int>(world.provider.calls().size());
  totals.lookups += world.provider.lookups(kPay);
  return "";
}

TEST(EnginePostgresKillTest, RunsFinishWithEachPaymentOnceAcrossKills) {
  auto server = PostgresServer::Start();
  ASSERT_TRUE(server) << server.error().ToString();
  std::vector<std::uint64_t> seeds;
  if (std::int64_t one = FromEnv("RECKON_ENGINE_PG_KILL_SEED", 0); one != 0) {
    seeds.push_back(static_cast<std::uint64_t>(one));
  } else {
    for (std::int64_t s = 1; s <= FromEnv("RECKON_ENGINE_PG_KILL_SEEDS", 3); ++s) {
      seeds.push_back(static_cast<std::uint64_t>(s));
    }
  }
  const auto started = std::chrono::steady_clock::now();
  Totals totals;
  for (std::uint64_t seed : seeds) {
    const std::string violation = RunSeed(*server.value(), seed, totals);
    ASSERT_EQ(violation, "") << "server log:\n" << server.value()->LogTail();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("engine postgres kill: %zu seeds, %d kills (%d of the server, %d of one child; "
              "%d at a provider call, %d timed), "
              "the engine stopped in %d lives, %d lives; %d provider calls for %d payments, %d "
              "kills took a committed payment's outcome, %d lookups; %.1f s\n",
              seeds.size(), totals.kills, totals.kills_server, totals.kills_child,
              totals.kills_at_call, totals.kills_timed, totals.stops,
              totals.lives, totals.calls, static_cast<int>(seeds.size()) * kRuns,
              totals.outcomes_lost, totals.lookups, seconds);
}

}  // namespace
}  // namespace reckon
