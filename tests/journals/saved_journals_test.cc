// The journal format's compatibility promise (docs/JOURNAL_FORMAT.md), kept by a test: every
// journal saved by an earlier release (tests/journals/<release>/, written by make_journals) is
// opened by this release's code, migrated, decoded event by event, folded into run states, and
// recovered by a real engine running the same workflow and tool code. Waiting runs still wait,
// the attempt a crash left in flight is reconciled, finished runs are not touched, and nothing
// is executed twice. A journal saved before page checksums also takes them (`reckon admin
// vacuum`) and reads the same afterwards. Each journal is copied into a temporary directory first: the saved files
// are never opened in place.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/object.hpp>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>

#include "reckon/storage/sqlite/sqlite_journal.h"
#include "reckon/api/server/service.h"
#include "reckon/contract/contract_json.h"
#include "reckon/engine/engine.h"
#include "reckon/plan/plan.h"
#include "reckon/engine/run_state.h"
#include "reckon/storage/journal.h"
#include "reckon/storage/sqlite/journal_check.h"
#include "reckon/storage/sqlite/journal_rewrite.h"
#include "reckon/storage/sqlite/schema.h"
#include "reckon/storage/sqlite/sqlite.h"
#include "tests/journals/saved_workload.h"
#include "tests/support/temp_dir.h"
#include "reckon/host/embedded_host.h"
#include "reckon/testkit/gtest.h"
#include "reckon/testkit/fake_provider.h"
#include "reckon/host/testing/journal_view.h"
#include "reckon/host/testing/test_workflows.h"

namespace reckon::testing::saved {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using storage::Event;

// The release directories under tests/journals/, oldest first.
std::vector<fs::path> Releases() {
  std::vector<fs::path> releases;
  for (const auto& entry : fs::directory_iterator(fs::path(RECKON_SOURCE_DIR) / "tests/journals")) {
    if (entry.is_directory()) releases.push_back(entry.path());
  }
  std::sort(releases.begin(), releases.end());
  return releases;
}

// A copy of a saved journal in a fresh temporary directory.
class Copy {
 public:
  Copy(const fs::path& release, const std::string& name) : path_(dir_.File(name)) {
    fs::copy_file(release / name, path_);
  }
  const std::string& path() const { return path_; }

 private:
  TempDir dir_;
  std::string path_;
};

std::unique_ptr<storage::Journal> Open(const std::string& path) {
  auto opened = storage::OpenSqliteJournal(path);
  if (!opened) ADD_FAILURE() << path << ": " << opened.error().ToString();
  return opened ? std::move(opened).value() : nullptr;
}

struct SavedRun {
  storage::RunRef ref;
  std::vector<Event> events;
};

// Every run and its events, by workflow id, read (and so decoded) from the journal.
std::map<std::string, SavedRun> ReadAll(storage::Journal& journal) {
  std::map<std::string, SavedRun> runs;
  auto rows = journal.ListRuns();
  EXPECT_TRUE(rows) << rows.error().ToString();
  if (!rows) return runs;
  for (const storage::RunRow& row : rows.value()) {
    auto events = journal.ReadEvents(row.ref);
    EXPECT_TRUE(events) << row.ref.workflow_id << ": " << events.error().ToString();
    if (events) runs[row.ref.workflow_id] = SavedRun{row.ref, std::move(events).value()};
  }
  return runs;
}

// What a saved run must fold to: its status and the state of its operations, in step order.
struct Expected {
  std::string status;
  std::vector<OperationState> operations;
};

std::map<std::string, Expected> EmbeddedRuns() {
  using S = OperationState;
  return {
      {kCheckout, {"completed", {S::kCommitted, S::kCommitted}}},
      {kPayoutGranted, {"completed", {S::kCommitted}}},
      {kPayoutWaiting, {"running", {S::kAwaitingApproval}}},
      {kTransferParked, {"running", {S::kNeedsHuman}}},
      {kNapDone, {"completed", {}}},
      {kNapLong, {"running", {}}},
      {kNapSignal, {"running", {}}},
      {kPlan, {"completed", {S::kCommitted, S::kCommitted}}},
      {kMidFlight, {"running", {S::kInFlight}}},
  };
}

void ExpectFoldsTo(const std::map<std::string, SavedRun>& runs,
                   const std::map<std::string, Expected>& expected) {
  ASSERT_EQ(runs.size(), expected.size());
  for (const auto& [id, run] : runs) {
    SCOPED_TRACE(id);
    ASSERT_TRUE(expected.count(id));
    const std::vector<Event>& events = run.events;
    ASSERT_FALSE(events.empty());
    RunState state(run.ref);
    RECKON_ASSERT_OK(state.ApplyAll(events));
    EXPECT_EQ(storage::RunStatusName(state.status()), expected.at(id).status);
    std::vector<const OperationRecord*> ops;
    for (const auto& [op_id, op] : state.operations()) ops.push_back(&op);
    std::sort(ops.begin(), ops.end(), [](auto* a, auto* b) { return a->step_id < b->step_id; });
    std::vector<OperationState> states;
    for (const OperationRecord* op : ops) states.push_back(op->state);
    EXPECT_EQ(states, expected.at(id).operations) << EventNames(events);
  }
}

TEST(SavedJournalsTest, ThereIsAtLeastOneRelease) { EXPECT_FALSE(Releases().empty()); }

TEST(SavedJournalsTest, EveryJournalMigratesDecodesAndFolds) {
  const int newest = storage::JournalMigrations().back().version;
  for (const fs::path& release : Releases()) {
    for (const char* name : {kEmbeddedJournal, kServerJournal}) {
      SCOPED_TRACE(release.filename().string() + "/" + name);
      Copy copy(release, name);
      {
        auto raw = storage::SqliteDb::Open(copy.path(), /*read_only=*/true);
        ASSERT_TRUE(raw) << raw.error().ToString();
        auto version = raw.value().QueryInt("PRAGMA user_version");
        ASSERT_TRUE(version);
        EXPECT_GE(version.value(), 1);
        EXPECT_LE(version.value(), newest);
      }
      auto journal = Open(copy.path());
      ASSERT_NE(journal, nullptr);
      EXPECT_EQ(journal->schema_version(), newest);
      auto integrity = journal->IntegrityCheck();
      ASSERT_TRUE(integrity);
      EXPECT_EQ(integrity.value(), "ok");
      const auto runs = ReadAll(*journal);
      if (std::string(name) == kEmbeddedJournal) {
        ExpectFoldsTo(runs, EmbeddedRuns());
      } else {
        ExpectFoldsTo(runs, {{kCheckout, {"completed", {OperationState::kCommitted,
                                                        OperationState::kCommitted}}}});
      }
    }
  }
}

// Page checksums added to a saved journal (or found there, for a release that wrote them)
// change nothing it holds.
TEST(SavedJournalsTest, EveryJournalTakesPageChecksumsAndReadsTheSame) {
  for (const fs::path& release : Releases()) {
    for (const char* name : {kEmbeddedJournal, kServerJournal}) {
      SCOPED_TRACE(release.filename().string() + "/" + name);
      Copy before(release, name);
      Copy after(release, name);
      auto enabled = storage::VacuumJournal(after.path());
      ASSERT_TRUE(enabled) << enabled.error().ToString();
      auto report = storage::CheckJournal(after.path());
      ASSERT_TRUE(report) << report.error().ToString();
      EXPECT_TRUE(report.value().ok()) << report.value().problems.front();
      EXPECT_EQ(report.value().page_checksums, "on");
      auto old_journal = Open(before.path());
      auto new_journal = Open(after.path());
      ASSERT_NE(old_journal, nullptr);
      ASSERT_NE(new_journal, nullptr);
      EXPECT_EQ(new_journal->integrity_warning(), "");
      const auto old_runs = ReadAll(*old_journal);
      const auto new_runs = ReadAll(*new_journal);
      ASSERT_EQ(new_runs.size(), old_runs.size());
      for (const auto& [id, run] : old_runs) {
        ASSERT_TRUE(new_runs.count(id)) << id;
        EXPECT_EQ(EventNames(new_runs.at(id).events), EventNames(run.events)) << id;
      }
    }
  }
}

// A plan run keeps the hash of its plan: the hash is part of the format, not of a release.
TEST(SavedJournalsTest, APlanRunKeepsItsDefinitionHash) {
  auto plan = ParsePlanJson(PlanJson());
  ASSERT_TRUE(plan);
  for (const fs::path& release : Releases()) {
    SCOPED_TRACE(release.filename().string());
    Copy copy(release, kEmbeddedJournal);
    auto journal = Open(copy.path());
    ASSERT_NE(journal, nullptr);
    const auto started = BodiesOf<storage::WorkflowStarted>(ReadAll(*journal)[kPlan].events);
    ASSERT_EQ(started.size(), 1u);
    EXPECT_EQ(started[0].definition_hash, PlanHash(plan.value()));
  }
}

// The contracts server mode journaled load as the server loads them, and are the workload's.
TEST(SavedJournalsTest, JournaledContractsLoadAndMatchTheirHashes) {
  for (const fs::path& release : Releases()) {
    SCOPED_TRACE(release.filename().string());
    Copy copy(release, kServerJournal);
    auto journal = Open(copy.path());
    ASSERT_NE(journal, nullptr);
    ContractRegistry registry;
    auto loaded = api::LoadJournaledContracts(*journal, registry);
    ASSERT_TRUE(loaded) << loaded.error().ToString();
    EXPECT_EQ(loaded.value(), static_cast<int>(Contracts().size()));
    for (const ToolContract& contract : Contracts()) {
      const ToolContract* journaled = registry.Find(contract.name);
      ASSERT_NE(journaled, nullptr) << contract.name;
      EXPECT_EQ(ContractHash(*journaled).value(), ContractHash(contract).value()) << contract.name;
    }
  }
}

// One embedded process (an EmbeddedHost) over a copied journal, with the workload's code
// registered.
class Life {
 public:
  explicit Life(const std::string& path) : path_(path) {
    (void)workflows_.Register(kCallOnce, CallOnce);
    RECKON_EXPECT_OK(RegisterWorkflows(workflows_));
    RECKON_EXPECT_OK(RegisterTools(tools_, provider_));
    auto journal = Open(path);
    if (!journal) throw std::runtime_error("cannot open " + path);
    host_ = std::make_unique<EmbeddedHost>(std::move(journal), tools_, workflows_);
  }
  ~Life() { Stop(); }
  // Ends the life as the harness does (engine, then what still runs, then the journal), and
  // reopens the journal for reads.
  void Stop() {
    if (!host_) return;
    host_.reset();
    journal_ = Open(path_);
  }

  Engine& engine() { return host_->engine(); }
  testkit::FakeProvider& provider() { return provider_; }
  // The host's journal while it lives (reads between batches), else the reopened one.
  storage::Journal& journal() { return host_ ? host_->journal() : *journal_; }

  // Runs the io_context until `done` holds (true) or 10 s passed (false).
  bool RunUntil(const std::function<bool()>& done) {
    asio::io_context& io = host_->io();
    auto timed_out = std::make_shared<bool>(false);
    asio::steady_timer watchdog(io, 10s);
    watchdog.async_wait([timed_out](const boost::system::error_code& ec) {
      if (!ec) *timed_out = true;
    });
    io.restart();
    while (!done() && !*timed_out) io.run_one();
    watchdog.cancel();
    return done();
  }
  template <class T>
  std::optional<T> Await(asio::awaitable<T> operation) {
    auto slot = std::make_shared<std::optional<T>>();
    asio::co_spawn(host_->io(), Capture(std::move(operation), slot), asio::detached);
    RunUntil([slot] { return slot->has_value(); });
    return std::move(*slot);
  }

 private:
  template <class T>
  static asio::awaitable<void> Capture(asio::awaitable<T> operation,
                                       std::shared_ptr<std::optional<T>> slot) {
    T value = co_await std::move(operation);
    slot->emplace(std::move(value));
  }

  std::string path_;
  testkit::FakeProvider provider_{/*dedup=*/false};  // outlives the host whose coroutines use it
  ToolRegistry tools_;
  WorkflowRegistry workflows_;
  std::unique_ptr<EmbeddedHost> host_;          // the process life
  std::unique_ptr<storage::Journal> journal_;   // for reads, after Stop()
};

std::optional<OperationRecord> OnlyOperation(Life& life, const std::string& id) {
  std::optional<RunSummary> run = life.engine().Describe(id);
  if (!run || run->operations.size() != 1) return std::nullopt;
  return run->operations.front();
}

// The names of the release directories (e.g. "0.1.0"), for test names that hold no path.
std::vector<std::string> ReleaseNames() {
  std::vector<std::string> names;
  for (const fs::path& release : Releases()) names.push_back(release.filename().string());
  return names;
}

fs::path ReleaseDir(const std::string& name) {
  return fs::path(RECKON_SOURCE_DIR) / "tests/journals" / name;
}

class SavedJournalRecoveryTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SavedJournalRecoveryTest, WaitingRunsWaitAndTheAttemptInFlightIsReconciledOnce) {
  Copy copy(ReleaseDir(GetParam()), kEmbeddedJournal);
  Life life(copy.path());
  const auto before = ReadAll(life.journal());
  auto recovered = life.Await(life.engine().Recover());
  ASSERT_TRUE(recovered);
  RECKON_ASSERT_OK(*recovered);
  EXPECT_EQ(recovered->value(), 5);  // the runs still running

  // Until mid-flight completes and only the run that sleeps is left busy (the others wait on
  // a signal or a person, which the engine cannot do by itself).
  ASSERT_TRUE(life.RunUntil([&life] {
    auto run = life.engine().Describe(kMidFlight);
    return run && run->status == storage::RunStatus::kCompleted && life.engine().BusyRuns() == 1;
  }));
  EXPECT_EQ(OnlyOperation(life, kPayoutWaiting)->state, OperationState::kAwaitingApproval);
  EXPECT_EQ(OnlyOperation(life, kTransferParked)->state, OperationState::kNeedsHuman);
  for (const char* id : {kNapLong, kNapSignal}) EXPECT_EQ(life.engine().Describe(id)->status, storage::RunStatus::kRunning);
  // What each waits on, though the release that wrote them journaled no waits.
  EXPECT_EQ(life.engine().Describe(kNapSignal)->wait, (RunWait{WaitKind::kSignal, "go"}));
  EXPECT_EQ(life.engine().Describe(kNapLong)->wait.kind, WaitKind::kTimer);
  EXPECT_EQ(life.engine().Describe(kPayoutWaiting)->wait.kind, WaitKind::kApproval);
  EXPECT_EQ(life.engine().Describe(kTransferParked)->wait.kind, WaitKind::kPerson);
  const testkit::FakeProvider& provider = life.provider();
  const std::string charge = OperationIdOfStep(before.at(kMidFlight).events, "charge");
  ASSERT_EQ(provider.calls().size(), 1u);  // only mid-flight's charge, once
  EXPECT_EQ(provider.calls().front().key, charge);
  EXPECT_EQ(provider.lookups("charge"), 1);
  EXPECT_EQ(provider.effects(charge), 1);
  life.Stop();

  const auto after = ReadAll(life.journal());
  ASSERT_EQ(after.size(), before.size());
  for (const auto& [id, run] : before) {
    if (id == kMidFlight || id == kNapSignal) continue;
    EXPECT_EQ(EventNames(after.at(id).events), EventNames(run.events)) << id;  // untouched
  }
  // The run parked in WaitSignal gains the marker that names its wait (the code recorded it on
  // replay, a release that journals waits), and nothing else.
  const std::vector<Event>& nap = after.at(kNapSignal).events;
  EXPECT_EQ(EventNames(nap), EventNames(before.at(kNapSignal).events) + " MarkerRecorded");
  const auto markers = BodiesOf<storage::MarkerRecorded>(nap);
  ASSERT_EQ(markers.size(), 1u);
  EXPECT_EQ(markers[0].kind, "wait_signal");
  EXPECT_EQ(markers[0].step_id, "signal:go#1");
  EXPECT_EQ(markers[0].value_json, "\"go\"");
  EXPECT_EQ(EventNames(after.at(kMidFlight).events, charge),
            "OperationPrepared AttemptStarted OutcomeUnknown ReconciliationStarted "
            "ReconciliationResult RetryScheduled AttemptStarted OperationCommitted");
  const auto unknown = BodiesOf<storage::OutcomeUnknown>(after.at(kMidFlight).events, charge);
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0].reason, "engine_restart");
}

TEST_P(SavedJournalRecoveryTest, RecoveredRunsStillTakeTheirApprovalsSignalsAndResolutions) {
  Copy copy(ReleaseDir(GetParam()), kEmbeddedJournal);
  Life life(copy.path());
  auto recovered = life.Await(life.engine().Recover());
  ASSERT_TRUE(recovered);
  RECKON_ASSERT_OK(*recovered);

  const OperationRecord payout = OnlyOperation(life, kPayoutWaiting).value_or(OperationRecord{});
  auto granted = life.Await(life.engine().DecideApproval(
      kPayoutWaiting,
      ApprovalDecision{payout.approval_id, "", payout.intent_hash, true, "bob@example.com", ""}));
  ASSERT_TRUE(granted);
  RECKON_EXPECT_OK(*granted);
  const OperationRecord transfer = OnlyOperation(life, kTransferParked).value_or(OperationRecord{});
  auto resolved = life.Await(life.engine().Resolve(
      kTransferParked,
      HumanResolution{transfer.operation_id, true, "tr_manual_1", "carol@example.com", ""}));
  ASSERT_TRUE(resolved);
  RECKON_EXPECT_OK(*resolved);
  auto signalled = life.Await(life.engine().Signal(kNapSignal, "go", "\"later\""));
  ASSERT_TRUE(signalled);
  RECKON_EXPECT_OK(*signalled);

  ASSERT_TRUE(life.RunUntil([&life] {
    for (const char* id : {kPayoutWaiting, kTransferParked, kNapSignal, kMidFlight}) {
      if (life.engine().Describe(id)->status != storage::RunStatus::kCompleted) return false;
    }
    return true;
  }));
  EXPECT_EQ(life.engine().Describe(kNapLong)->status, storage::RunStatus::kRunning);
  EXPECT_EQ(life.provider().effects(payout.operation_id), 1);
  EXPECT_TRUE(life.provider().calls_to("transfer").empty());  // a person resolved it
}

INSTANTIATE_TEST_SUITE_P(Releases, SavedJournalRecoveryTest, ::testing::ValuesIn(ReleaseNames()),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '.', '_');
                           return name;
                         });

}  // namespace
}  // namespace reckon::testing::saved
