#include "tests/sim/sim_world.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdio>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "reckon/engine/engine.h"
#include "reckon/storage/sqlite/sqlite_journal.h"
#include "reckon/storage/testing/faulty_journal.h"
#include "reckon/testkit/manual_clock.h"
#include "reckon/host/local_worker.h"
#include "tests/sim/sim_checker.h"
#include "tests/sim/sim_fleet.h"
#include "tests/sim/sim_network.h"
#include "tests/sim/sim_provider.h"
#include "tests/sim/sim_scheduler.h"
#include "tests/sim/sim_tools.h"
#include "tests/support/temp_dir.h"

namespace reckon::sim {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;

namespace {

constexpr std::int64_t kMs = 1000;
constexpr std::int64_t kFaultWindowUs = 1500 * kMs;
constexpr std::int64_t kCalmLimitUs = 60'000 * kMs;  // after the window: liveness bound
constexpr std::int64_t kTickUs = 10 * kMs;           // chaos is drawn per tick
constexpr std::int64_t kMaxSteps = 2'000'000;
// 2026-01-01T00:00:00Z: the simulation's epoch, so that ids built from the time replay too.
constexpr std::int64_t kEpochUs = 1'767'225'600'000'000;

std::uint64_t Fnv(std::uint64_t h, std::string_view bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

class World {
 public:
  explicit World(const SimOptions& options)
      : options_(options),
        rng_(options.seed * 0x9e3779b97f4a7c15ULL + 1),
        faults_(SimFaults::Draw(rng_)),
        clock_(FromMicros(kEpochUs)),
        network_(agenda_, clock_, rng_, faults_, counts_),
        provider_(rng_, faults_, counts_),
        fleet_(static_cast<int>(rng_.Between(1, 3)), agenda_, clock_, rng_, faults_, counts_,
               network_, provider_, SideEffectOfSimTool),
        checker_([this] { return Now() - kEpochUs; }, MakeLog()) {
    RegisterSimTools(tools_);
    RegisterSimWorkflows(workflows_);
  }

  ~World() { Crash(/*fault=*/false); }

  SimReport Run();

 private:
  std::int64_t Now() { return clock_.NowMicros(); }
  std::function<void(const std::string&)> MakeLog() {
    if (options_.log == nullptr) return {};
    return [this](const std::string& line) {
      const std::int64_t t = Now() - kEpochUs;
      char stamp[32];
      std::snprintf(stamp, sizeof stamp, "[%lld.%03lldms] ", static_cast<long long>(t / 1000),
                    static_cast<long long>(t % 1000));
      *options_.log << stamp << line << "\n";
    };
  }
  void Log(const std::string& line) {
    if (options_.log != nullptr) MakeLog()(line);
  }

  void Boot();
  void Crash(bool fault);
  void ScheduleBoot();
  void Chaos();
  void People();
  bool Done();
  void CheckProvider();
  void StartRun(int run);
  asio::awaitable<void> RecoverAndStart(Engine* engine);
  asio::awaitable<void> Start(Engine* engine, int run);
  asio::awaitable<void> Decide(Engine* engine, std::string workflow_id, ApprovalDecision d);
  asio::awaitable<void> Resolve(Engine* engine, std::string workflow_id, HumanResolution r);
  asio::awaitable<void> Cancel(Engine* engine, std::string workflow_id);
  asio::awaitable<void> Signal(Engine* engine, std::string workflow_id);
  std::string RunId(int run) const { return "sim-" + std::to_string(run); }
  std::uint64_t Digest();

  const SimOptions options_;
  SimRng rng_;
  SimFaults faults_;
  SimCounts counts_;
  SimScheduler agenda_;
  testkit::ManualClock clock_;
  SimNetwork network_;
  SimProvider provider_;
  SimFleet fleet_;
  SimChecker checker_;
  ToolRegistry tools_;
  WorkflowRegistry workflows_;
  testing::TempDir dir_;
  std::vector<json::value> inputs_;
  std::vector<std::int64_t> start_at_;
  std::vector<bool> started_;
  std::size_t provider_violations_seen_ = 0;
  // How eagerly approvers look at a pending approval, per glance: slow approvers of a stormy
  // seed let some approvals pass their 1 s deadline (rejected by the engine, never run).
  double approver_pace_ = 0.3;
  // How often someone cancels a running run, per glance (a third of the seeds: never).
  double cancel_pace_ = 0;

  // The server's current process life (null while it is down).
  std::unique_ptr<storage::Journal> journal_;
  std::unique_ptr<storage::FaultyJournal> faulty_;
  std::unique_ptr<asio::io_context> io_;
  std::unique_ptr<LocalWorker> worker_;
  std::unique_ptr<Engine> engine_;
  bool recovered_ = false;
  bool boot_pending_ = false;
  int lives_ = 0;
};

void World::Boot() {
  boot_pending_ = false;
  if (engine_) return;
  ++lives_;
  storage::SqliteJournalOptions journal_options;
  // A simulated crash is a process crash: what SQLite committed survives it without fsync
  // (power cuts are the power-loss tests' business, docs/TESTING.md).
  journal_options.sync = storage::SqliteJournalOptions::Sync::kOff;
  auto opened = storage::OpenSqliteJournal(dir_.File("journal.db"), journal_options);
  if (!opened) throw std::runtime_error("sim journal: " + opened.error().ToString());
  journal_ = std::move(opened).value();
  checker_.Reopened(*journal_);
  storage::FaultyJournal::Faults disk;
  if (faults_.active) {
    // At most one failure per life, at a commit drawn from the per-commit rates.
    for (std::int64_t commit = 1; commit <= 400 && disk.fail_commit == 0 && disk.fail_sync == 0;
         ++commit) {
      if (rng_.Chance(faults_.commit_fail)) disk.fail_commit = commit;
      else if (rng_.Chance(faults_.sync_fail)) disk.fail_sync = commit;
    }
  }
  faulty_ = std::make_unique<storage::FaultyJournal>(*journal_, disk);
  faulty_->OnCommit([this](std::int64_t commit) {
    if (commit > 0 && faults_.active && rng_.Chance(faults_.commit_slow)) {
      counts_.Add("fault.commit_slow");
      clock_.Advance(std::chrono::microseconds(rng_.Between(1 * kMs, 80 * kMs)));
    }
  });
  if (disk.fail_commit != 0) Log("life " + std::to_string(lives_) + ": commit " +
                                 std::to_string(disk.fail_commit) + " will fail");
  if (disk.fail_sync != 0) Log("life " + std::to_string(lives_) + ": the sync of commit " +
                               std::to_string(disk.fail_sync) + " will fail");
  io_ = std::make_unique<asio::io_context>();
  worker_ = std::make_unique<LocalWorker>(workflows_, tools_);
  EngineOptions engine_options;
  engine_options.decider.mutant = options_.mutant;
  // The fleet times lookups out in simulated time; the engine's own (steady-clock) bound
  // must never fire in a simulation, or a slow machine would change what a seed does.
  engine_options.lookup_timeout = 1h;
  engine_ = std::make_unique<Engine>(io_->get_executor(), *faulty_, tools_.contracts(), *worker_,
                                     fleet_, clock_, engine_options);
  engine_->AddSink(checker_);
  fleet_.AttachServer(io_->get_executor(), *engine_);
  recovered_ = false;
  Log("server life " + std::to_string(lives_) + " boots");
  asio::co_spawn(*io_, RecoverAndStart(engine_.get()), asio::detached);
}

void World::Crash(bool fault) {
  if (!engine_) return;
  if (fault) counts_.Add("fault.server_crashed");
  Log("server life " + std::to_string(lives_) + " ends");
  // A process dies between two instructions: what the engine awaits is abandoned, then the
  // engine, then every coroutine still on its io_context; the journal closes last.
  fleet_.DetachServer();
  engine_.reset();
  worker_.reset();
  io_.reset();
  faulty_.reset();
  journal_.reset();
  recovered_ = false;
}

void World::ScheduleBoot() {
  if (boot_pending_) return;
  boot_pending_ = true;
  agenda_.At(Now() + rng_.Between(1 * kMs, 30 * kMs), [this] { Boot(); });
}

asio::awaitable<void> World::RecoverAndStart(Engine* engine) {
  Result<int> recovered = co_await engine->Recover();
  if (!recovered) {
    Log("recovery failed: " + recovered.error().ToString());
    co_return;  // the engine stopped; the world restarts it
  }
  recovered_ = true;
  auto executor = co_await asio::this_coro::executor;
  // A client whose start got no answer retries it: Start is idempotent.
  for (int run = 0; run < static_cast<int>(inputs_.size()); ++run) {
    if (start_at_[static_cast<std::size_t>(run)] <= Now()) {
      asio::co_spawn(executor, Start(engine, run), asio::detached);
    }
  }
}

asio::awaitable<void> World::Start(Engine* engine, int run) {
  Result<storage::RunRef> started =
      co_await engine->Start(RunId(run), std::string(kSimAgent), inputs_[static_cast<std::size_t>(run)]);
  if (started) {
    started_[static_cast<std::size_t>(run)] = true;
  } else {
    Log("start of " + RunId(run) + " failed: " + started.error().ToString());
  }
}

void World::StartRun(int run) {
  if (!engine_ || !recovered_) return;  // the boot's recovery starts it
  asio::co_spawn(*io_, Start(engine_.get(), run), asio::detached);
}

asio::awaitable<void> World::Decide(Engine* engine, std::string workflow_id, ApprovalDecision d) {
  Result<void> decided = co_await engine->DecideApproval(std::move(workflow_id), std::move(d));
  counts_.Add(decided ? "people.decisions_taken" : "people.decisions_refused");
}

asio::awaitable<void> World::Signal(Engine* engine, std::string workflow_id) {
  Result<void> sent = co_await engine->Signal(std::move(workflow_id), "go", "{}");
  counts_.Add(sent ? "people.signals_taken" : "people.signals_refused");
}

asio::awaitable<void> World::Cancel(Engine* engine, std::string workflow_id) {
  Result<void> cancelled = co_await engine->Cancel(std::move(workflow_id), "changed my mind");
  counts_.Add(cancelled ? "people.cancels_taken" : "people.cancels_refused");
}

asio::awaitable<void> World::Resolve(Engine* engine, std::string workflow_id,
                                     HumanResolution r) {
  Result<void> resolved = co_await engine->Resolve(std::move(workflow_id), std::move(r));
  counts_.Add(resolved ? "people.resolutions_taken" : "people.resolutions_refused");
}

void World::Chaos() {
  if (!faults_.active) return;
  if (engine_ && rng_.Chance(faults_.engine_crash)) {
    Crash(/*fault=*/true);
    ScheduleBoot();
  }
  for (int node = 0; node < fleet_.workers(); ++node) {
    if (rng_.Chance(faults_.worker_crash)) fleet_.CrashWorker(node);
    if (rng_.Chance(faults_.worker_pause)) fleet_.PauseWorker(node, rng_.Between(30 * kMs, 150 * kMs));
  }
  agenda_.At(Now() + kTickUs, [this] { Chaos(); });
}

void World::People() {
  agenda_.At(Now() + rng_.Between(5 * kMs, 40 * kMs), [this] { People(); });
  if (!engine_ || !recovered_) return;
  std::vector<std::string> hashes;  // every intent the people have on their screens
  const std::vector<RunSummary> runs = engine_->Runs();
  for (const RunSummary& run : runs) {
    for (const OperationRecord& op : run.operations) {
      if (!op.intent_hash.empty()) hashes.push_back(op.intent_hash);
    }
  }
  for (const RunSummary& run : runs) {
    const std::string& workflow_id = run.ref.workflow_id;
    const bool waits_for_go = run.wait.kind == WaitKind::kSignal;
    if (!storage::IsTerminal(run.status) && rng_.Chance(waits_for_go ? 0.3 : 0.01)) {
      Log("people: signal go to " + workflow_id);
      asio::co_spawn(*io_, Signal(engine_.get(), workflow_id), asio::detached);
    }
    if (!storage::IsTerminal(run.status) && !run.cancel_requested &&
        rng_.Chance(cancel_pace_)) {
      // Refused while an operation may have acted; the engine says so and nothing changes.
      Log("people: cancel " + workflow_id);
      asio::co_spawn(*io_, Cancel(engine_.get(), workflow_id), asio::detached);
    }
    for (const OperationRecord& op : run.operations) {
      if (op.state == OperationState::kAwaitingApproval && rng_.Chance(approver_pace_)) {
        ApprovalDecision d;
        d.operation_id = op.operation_id;
        d.decided_by = "alice";
        d.granted = true;
        d.expected_intent_hash = op.intent_hash;
        if (faults_.active && rng_.Chance(faults_.confused_grant)) {
          // Reviewed another operation's screen, approves this one.
          counts_.Add("fault.people_confused_grant");
          std::string other = "0000000000000000000000000000000000000000000000000000000000000000";
          for (const std::string& h : hashes) {
            if (h != op.intent_hash) other = h;
          }
          d.expected_intent_hash = other;
        } else if (rng_.Chance(0.15)) {
          d.granted = false;
          d.reason = "not this one";
        }
        if (d.granted) checker_.RecordGrant(workflow_id, op.operation_id, d.expected_intent_hash);
        Log("people: " + std::string(d.granted ? "grant " : "deny ") + op.operation_id +
            " reviewed " + d.expected_intent_hash.substr(0, 12));
        asio::co_spawn(*io_, Decide(engine_.get(), workflow_id, std::move(d)), asio::detached);
      }
      if (op.state == OperationState::kNeedsHuman && rng_.Chance(0.3)) {
        HumanResolution r;
        r.operation_id = op.operation_id;
        r.committed = provider_.effects(op.operation_id) > 0;  // a person asks the provider
        r.provider_ref = provider_.ref_of(op.operation_id);
        r.resolved_by = "bob";
        r.note = "checked the provider's dashboard";
        Log("people: resolve " + op.operation_id + (r.committed ? " committed" : " not committed"));
        asio::co_spawn(*io_, Resolve(engine_.get(), workflow_id, std::move(r)), asio::detached);
      }
    }
  }
}

void World::CheckProvider() {
  const auto& doubles = provider_.double_effects();
  for (; provider_violations_seen_ < doubles.size(); ++provider_violations_seen_) {
    checker_.Violation("operation " + doubles[provider_violations_seen_] +
                       " of a non-repeatable tool has two effects at the provider");
  }
}

bool World::Done() {
  if (!engine_ || !recovered_ || engine_->failed()) return false;
  for (bool started : started_) {
    if (!started) return false;
  }
  if (engine_->BusyRuns() != 0 || fleet_.waiting() != 0) return false;
  for (int run = 0; run < static_cast<int>(inputs_.size()); ++run) {
    std::optional<RunSummary> summary = engine_->Describe(RunId(run));
    if (!summary) return false;
    if (storage::IsTerminal(summary->status)) continue;
    if (summary->wait.kind != WaitKind::kApproval && summary->wait.kind != WaitKind::kPerson) {
      return false;
    }
  }
  return true;
}

std::uint64_t World::Digest() {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  if (journal_) {
    for (int run = 0; run < static_cast<int>(inputs_.size()); ++run) {
      auto row = journal_->FindLatestRun(RunId(run));
      if (!row || !row.value()) continue;
      auto events = journal_->ReadEvents(row.value()->ref, 1);
      if (!events) continue;
      for (const storage::Event& e : events.value()) {
        h = Fnv(h, std::to_string(e.seq) + ":" + std::string(storage::EventTypeName(e.body)) +
                       "@" + std::to_string(e.recorded_at_us) + ";");
      }
    }
  }
  for (const auto& [key, effects] : provider_.ledger_effects()) {
    h = Fnv(h, key + "=" + std::to_string(effects) + ";");
  }
  for (const auto& [kind, n] : counts_.all()) h = Fnv(h, kind + "=" + std::to_string(n) + ";");
  return h;
}

SimReport World::Run() {
  SimReport report;
  report.seed = options_.seed;
  if (faults_.confused_grant > 0.2) approver_pace_ = 0.02;
  cancel_pace_ = 0.004 * static_cast<double>(rng_.Below(3));
  const int runs = static_cast<int>(rng_.Between(2, 6));
  for (int run = 0; run < runs; ++run) {
    inputs_.push_back(RandomAgentInput(rng_, run));
    start_at_.push_back(rng_.Between(0, 300 * kMs) + Now());
    started_.push_back(false);
    const int r = run;
    agenda_.At(start_at_.back(), [this, r] { StartRun(r); });
  }
  const std::int64_t fault_end = Now() + kFaultWindowUs;
  agenda_.At(fault_end, [this] {
    faults_.active = false;
    Log("faults stop");
  });
  agenda_.At(Now() + kTickUs, [this] { Chaos(); });
  agenda_.At(Now() + 5 * kMs, [this] { People(); });
  Boot();

  std::int64_t idle_spins = 0;
  std::int64_t steps = 0;
  for (; steps < kMaxSteps; ++steps) {
    std::size_t handled = 0;
    if (io_) {
      io_->restart();
      handled = io_->poll();
    }
    CheckProvider();
    if (engine_ && engine_->failed()) {
      counts_.Add("event.server_stopped_on_commit_failure");
      Crash(/*fault=*/false);
      ScheduleBoot();
      continue;
    }
    if (handled > 0) {
      idle_spins = 0;
      continue;
    }
    if (!faults_.active && Done()) break;
    if (Now() > fault_end + kCalmLimitUs) {
      std::ostringstream why;
      why << "liveness: " << kCalmLimitUs / 1'000'000
          << " s after the faults stopped, some run neither ended nor waits for a person:";
      if (engine_) {
        why << " (busy runs " << engine_->BusyRuns() << ", calls awaited:" << fleet_.DescribeWaiting()
            << ")";
        for (const RunSummary& run : engine_->Runs()) {
          why << " " << run.ref.workflow_id << " (" << WaitKindName(run.wait.kind) << " "
              << run.wait.detail << ")";
        }
      } else {
        why << " the server is down";
      }
      checker_.Violation(why.str());
      break;
    }
    std::optional<std::int64_t> next = agenda_.NextDue();
    if (auto timer = clock_.NextDue(); timer && (!next || ToMicros(*timer) < *next)) {
      next = ToMicros(*timer);
    }
    if (!next) {
      checker_.Violation("the world is idle but some run is not done (nothing is scheduled)");
      break;
    }
    if (*next > Now()) clock_.Advance(std::chrono::microseconds(*next - Now()));
    if (!agenda_.RunOneDue(Now())) {
      // An engine timer came due: its handler runs at the next poll. A world that neither
      // handles nor schedules anything for long is a simulator bug.
      if (++idle_spins > 10'000) {
        checker_.Violation("the simulation stopped making progress");
        break;
      }
    } else {
      idle_spins = 0;
    }
  }
  report.steps = steps;
  if (journal_) checker_.Finish(*journal_, provider_);
  CheckProvider();
  report.violations = checker_.violations();
  report.counts = counts_;
  for (const auto& [kind, n] : counts_.all()) {
    if (kind.rfind("fault.", 0) == 0) report.faults += n;
  }
  report.runs = runs;
  report.server_lives = lives_;
  report.batches = checker_.batches();
  report.simulated_us = Now() - kEpochUs;
  report.digest = Digest();
  return report;
}

}  // namespace

std::string SimReport::Summary() const {
  std::ostringstream out;
  out << "seed " << seed << ": " << (violations.empty() ? "ok" : "VIOLATED") << ", " << runs
      << " runs, " << server_lives << " server lives, " << batches << " batches, " << faults
      << " faults, " << steps << " steps, " << simulated_us / 1000 << " ms simulated, digest "
      << std::hex << digest << std::dec;
  for (const std::string& v : violations) out << "\n  " << v;
  return out.str();
}

SimReport RunSeed(const SimOptions& options) {
  World world(options);
  return world.Run();
}

}  // namespace reckon::sim
