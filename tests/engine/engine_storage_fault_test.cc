// The engine over a journal whose commits fail (storage/testing/faulty_journal.h):
//   - a failed commit stops the engine, every caller still waiting hears of it, and nothing
//     of the failed batch is acted on;
//   - nothing acknowledged is lost: after a failure at each commit in turn, the file holds
//     exactly what the engine acknowledged (a failed sync: at least that);
//   - a restart on the same file recovers: every run completes with each operation committed
//     once at the provider, whichever way the failed commit or sync went.
// Each "process" is built here by hand (io_context, journal, LocalWorker, Engine), committing
// on its own thread with a second connection for reads, as `reckon server` runs.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "reckon/engine/clock.h"
#include "reckon/engine/engine.h"
#include "reckon/storage/sqlite/sqlite_journal.h"
#include "reckon/storage/testing/faulty_journal.h"
#include "tests/support/temp_dir.h"
#include "reckon/host/local_worker.h"
#include "reckon/host/testing/engine_life.h"
#include "reckon/testkit/fake_provider.h"
#include "reckon/host/testing/fast_contracts.h"
#include "reckon/host/testing/journal_view.h"
#include "reckon/host/testing/test_workflows.h"

namespace reckon {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using namespace reckon::testing;
using storage::FaultyJournal;
using storage::Journal;

constexpr char kPay[] = "pay";
constexpr auto kWait = 10s;  // a watchdog against a hang, not a timing assertion

std::unique_ptr<Journal> OpenJournal(
    const std::string& path,
    storage::SqliteJournalOptions::Mode mode = storage::SqliteJournalOptions::Mode::kOwner) {
  storage::SqliteJournalOptions options;
  options.mode = mode;
  auto opened = storage::OpenSqliteJournal(path, options);
  if (!opened) throw std::runtime_error(opened.error().ToString());
  return std::move(opened).value();
}

// One provider, its tool and the workflow, shared by the process lives of one test. The
// provider does not deduplicate: a second commit of an operation would show as an effect.
struct World {
  World() {
    (void)tools.Register(
        testkit::ProviderTool(FastContract(kPay, SideEffect::kNonRepeatableWrite), provider));
    (void)workflows.Register(kCallOnce, CallOnce);
  }
  std::string path() const { return dir.File("journal.db"); }

  TempDir dir;
  testkit::FakeProvider provider{/*dedup=*/false};
  ToolRegistry tools;
  WorkflowRegistry workflows;
};

// The journals of one process life: the connection that commits, behind the faults, and a
// second connection for the engine's reads.
struct LifeJournals {
  LifeJournals(World& world, FaultyJournal::Faults faults)
      : sqlite(OpenJournal(world.path())),
        reader(OpenJournal(world.path(), storage::SqliteJournalOptions::Mode::kCompanion)),
        journal(std::make_unique<FaultyJournal>(*sqlite, faults)) {}
  std::unique_ptr<Journal> sqlite;
  std::unique_ptr<Journal> reader;
  std::unique_ptr<FaultyJournal> journal;
};

// One process life over the journal file (host/testing/engine_life.h); the journals are
// built first and closed last.
class Life : public LifeJournals, public EngineLife {
 public:
  Life(World& world, FaultyJournal::Faults faults)
      : LifeJournals(world, faults),
        EngineLife(*journal, *reader, world.workflows, world.tools, kWait) {}

  // The run's status as the engine shows it. Durable only once Idle(): a batch folds its
  // events into what Describe() shows before its commit returns.
  std::string Status(const std::string& workflow_id) const {
    auto run = engine->Describe(workflow_id);
    return run ? std::string(storage::RunStatusName(run->status)) : "";
  }
  bool Idle() const { return engine->BusyRuns() == 0; }
};

boost::json::value PayInput(const std::string& account) {
  return CallOnceInput(kPay, FastInput(account, 100));
}

TEST(EngineStorageFaultTest, AFailedCommitStopsTheEngineAndEveryWaitingCallerHearsOfIt) {
  World world;
  Life life(world, {});
  // A run that completes before anything fails.
  ASSERT_TRUE(life.Await(life.engine->Start("wf-done", kCallOnce, PayInput("acct-0"))));
  ASSERT_TRUE(life.RunUntil([&] { return life.Idle() && life.Status("wf-done") == "completed"; }));
  ASSERT_EQ(world.provider.calls().size(), 1u);

  // The next commit fails. While it is in progress, another caller queues a cancel of wf-a,
  // whose start is in that commit or waits for the next one.
  const std::int64_t failing = life.journal->commits() + 1;
  life.journal->set_faults({.fail_commit = failing});
  std::shared_ptr<std::optional<Result<void>>> cancel;
  life.journal->OnCommit([&life, &cancel, failing](std::int64_t commit) {
    if (commit != failing) return;
    std::promise<void> queued;
    asio::post(life.io, [&life, &cancel, &queued] {
      cancel = life.Spawn(life.engine->Cancel("wf-a", "changed my mind"));
      asio::post(life.io, [&queued] { queued.set_value(); });
    });
    queued.get_future().wait();
  });
  auto a = life.Spawn(life.engine->Start("wf-a", kCallOnce, PayInput("acct-a")));
  auto b = life.Spawn(life.engine->Start("wf-b", kCallOnce, PayInput("acct-b")));
  ASSERT_TRUE(life.RunUntil([&] {
    return a->has_value() && b->has_value() && cancel != nullptr && cancel->has_value();
  })) << "a caller was left waiting";

  EXPECT_TRUE(life.engine->failed());
  EXPECT_NE(life.engine->failure().find("commit " + std::to_string(failing)), std::string::npos)
      << life.engine->failure();
  for (const auto& start : {a, b}) {
    ASSERT_FALSE(**start);
    EXPECT_EQ((**start).error().code(), Errc::kUnavailable) << (**start).error().ToString();
  }
  ASSERT_FALSE(**cancel);
  EXPECT_EQ((**cancel).error().code(), Errc::kUnavailable) << (**cancel).error().ToString();
  EXPECT_EQ(world.provider.calls().size(), 1u) << "an attempt started for a failed batch";

  // The stopped engine refuses new work at once and commits nothing more.
  const std::int64_t commits = life.journal->commits();
  auto later = life.Await(life.engine->Start("wf-c", kCallOnce, PayInput("acct-c")));
  ASSERT_FALSE(later);
  EXPECT_EQ(later.error().code(), Errc::kUnavailable);
  EXPECT_EQ(life.journal->commits(), commits);
}

// --- a failure at each commit in turn, then a restart ----------------------------------------

enum class Fault { kCommit, kSync };

struct Outcome {
  bool failed = false;  // commit n was reached and failed
};

constexpr int kRuns = 4;
std::string RunId(int i) { return "wf-" + std::to_string(i); }
std::string Account(int i) { return "acct-" + std::to_string(i); }

// Life 1: kRuns runs start together (slow commits, so they share them) until commit `n`
// fails. Then checks what a new process finds in the file against what was acknowledged.
Outcome FailAt(World& world, Fault fault, std::int64_t n) {
  FaultyJournal::Faults faults{.commit_delay = 1ms};
  (fault == Fault::kCommit ? faults.fail_commit : faults.fail_sync) = n;
  auto life = std::make_unique<Life>(world, faults);
  std::vector<std::shared_ptr<std::optional<Result<storage::RunRef>>>> starts;
  for (int i = 0; i < kRuns; ++i) {
    starts.push_back(life->Spawn(life->engine->Start(RunId(i), kCallOnce, PayInput(Account(i)))));
  }
  auto settled = [&] {
    for (const auto& start : starts) {
      if (!start->has_value()) return false;
    }
    if (life->engine->failed()) return true;
    if (!life->Idle()) return false;
    for (int i = 0; i < kRuns; ++i) {
      if (life->Status(RunId(i)) != "completed") return false;
    }
    return true;
  };
  EXPECT_TRUE(life->RunUntil(settled)) << "commit " << n;
  const Outcome outcome{life->engine->failed()};
  const std::map<std::string, std::int64_t> acknowledged = life->acknowledged;
  std::vector<bool> start_acknowledged;
  for (const auto& start : starts) start_acknowledged.push_back(start->has_value() && **start);
  life.reset();

  auto journal = OpenJournal(world.path());
  for (int i = 0; i < kRuns; ++i) {
    auto run = journal->FindLatestRun(RunId(i));
    EXPECT_TRUE(run) << run.error().ToString();
    const std::int64_t on_disk = run && run.value() ? run.value()->next_seq - 1 : 0;
    auto acked = acknowledged.find(RunId(i));
    const std::int64_t expected = acked == acknowledged.end() ? 0 : acked->second;
    if (fault == Fault::kCommit) {
      EXPECT_EQ(on_disk, expected) << RunId(i) << ", commit " << n << " failed";
    } else {
      EXPECT_GE(on_disk, expected) << RunId(i) << ", sync of commit " << n << " failed";
    }
    if (start_acknowledged[i]) {
      EXPECT_GT(on_disk, 0) << RunId(i) << ": an acknowledged start was lost";
    }
  }
  // Nothing was acted on before it was durable: every call has its AttemptStarted on disk.
  for (const testkit::CallRecord& call : world.provider.calls()) {
    bool journaled = false;
    for (int i = 0; i < kRuns; ++i) {
      auto run = journal->FindLatestRun(RunId(i));
      if (!run || !run.value()) continue;
      auto events = journal->ReadEvents(run.value()->ref);
      if (!events) continue;
      for (const auto& started : BodiesOf<storage::AttemptStarted>(events.value(), call.key)) {
        if (started.attempt == call.attempt) journaled = true;
      }
    }
    EXPECT_TRUE(journaled) << "commit " << n << ": call " << call.key << " #" << call.attempt
                           << " was made before its AttemptStarted was durable";
  }
  return outcome;
}

// Life 2, without faults: recovers, then starts every run again as a client that got an error
// would (a start is idempotent), and runs until all are finished. Returns how many runs
// Recover() resumed.
int RestartAndFinish(World& world) {
  Life life(world, {});
  const Result<int> resumed = life.Await(life.engine->Recover());
  EXPECT_TRUE(resumed) << resumed.error().ToString();
  for (int i = 0; i < kRuns; ++i) {
    auto started = life.Await(life.engine->Start(RunId(i), kCallOnce, PayInput(Account(i))));
    EXPECT_TRUE(started) << RunId(i) << ": " << started.error().ToString();
  }
  EXPECT_TRUE(life.RunUntil([&life] {
    if (!life.Idle()) return false;
    for (int i = 0; i < kRuns; ++i) {
      auto run = life.engine->Describe(RunId(i));  // none: it finished before this life
      if (run && run->status == storage::RunStatus::kRunning) return false;
    }
    return true;
  })) << "the runs did not finish after the restart";
  EXPECT_FALSE(life.engine->failed()) << life.engine->failure();
  return resumed ? resumed.value() : 0;
}

// Every run completed, and its operation took effect exactly once at the provider.
void ExpectEachOperationCommittedOnce(World& world, std::int64_t n) {
  auto journal = OpenJournal(world.path());
  for (int i = 0; i < kRuns; ++i) {
    auto run = journal->FindLatestRun(RunId(i));
    ASSERT_TRUE(run && run.value()) << RunId(i);
    EXPECT_EQ(run.value()->status, storage::RunStatus::kCompleted) << RunId(i) << ", commit " << n;
    auto events = journal->ReadEvents(run.value()->ref);
    ASSERT_TRUE(events) << events.error().ToString();
    const std::string names = EventNames(events.value());
    auto committed = BodiesOf<storage::OperationCommitted>(events.value());
    ASSERT_EQ(committed.size(), 1u) << RunId(i) << ", commit " << n << ": " << names;
    EXPECT_EQ(world.provider.effects(committed[0].operation_id), 1)
        << RunId(i) << ", commit " << n << ": " << names;
  }
  EXPECT_EQ(world.provider.total_effects(), kRuns) << "commit " << n;
}

class FailureAtEachCommitTest : public ::testing::TestWithParam<Fault> {};

// The runs need between 2 commits (all starts share one, all completions the next) and
// 2 * kRuns (none shares); how they group varies, so a late commit may not be reached.
TEST_P(FailureAtEachCommitTest, NothingAcknowledgedIsLostAndARestartRecovers) {
  int failures = 0, resumed = 0;
  for (std::int64_t n = 1; n <= 2 * kRuns; ++n) {
    World world;
    const Outcome outcome = FailAt(world, GetParam(), n);
    resumed += RestartAndFinish(world);
    ExpectEachOperationCommittedOnce(world, n);
    if (HasFailure()) return;
    if (outcome.failed) ++failures;
  }
  EXPECT_GE(failures, 2) << "commits 1 and 2 are always reached";
  EXPECT_GT(resumed, 0) << "no failure left a run for Recover() to resume";
}

INSTANTIATE_TEST_SUITE_P(Faults, FailureAtEachCommitTest,
                         ::testing::Values(Fault::kCommit, Fault::kSync),
                         [](const ::testing::TestParamInfo<Fault>& info) {
                           return info.param == Fault::kCommit ? "CommitFails" : "SyncFails";
                         });

}  // namespace
}  // namespace reckon
