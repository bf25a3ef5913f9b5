// The transactional outbox under SIGKILL, with every process real: `reckon server --nats-url`
// (its dispatcher inside), reckon-test-worker hosting call_then_publish (a charge, then two
// ctx.Publish), a nats-server with JetStream (tests/support/nats_server.h) holding the stream
// CRASH over crash.> with a two-minute duplicate window, and reckon-outbox-consumer
// (samples/outbox_consumer) processing into its own SQLite database through a durable pull
// consumer (ack wait 1 s, batches of 8, 20 ms of business work inside each effect's
// transaction, so that it lags behind and a kill finds messages in hand).
//
// The loop: at each kill point a random (seeded) delay is drawn, and six workflows are started
// one by one across it (`reckon start`, not waited for); then one of the server, the broker or
// the consumer is SIGKILLed and started again at once: the server on the same journal and port
// (it recovers; the worker reconnects by itself), the broker on the same port and store, the
// consumer on the same database and durable name. Every other kill of the server and of the
// broker comes while the broker is frozen (SIGSTOP) and two more workflows have just committed
// a message, so the dispatcher's publish waits for an ack: a killed server never records it,
// the broker stores the message when it resumes (SIGCONT) and the next life publishes it
// again (the broker absorbs the copy); a killed broker loses it, and the publish fails after
// its ack timeout and is retried (the test waits for that before it goes on). A start that failed under the kill is made again (idempotent on the workflow id).
// The targets are dealt evenly (a shuffled deck), so each process dies several times.
//
// Then nothing is killed any more: the test waits until every workflow completed, the outbox
// has no pending message and the consumer processed as many messages as the outbox holds;
// stops the consumer and the server and worker (SIGTERM) and the broker (SIGINT), each of
// which must exit with code 0; and audits the journal against the consumer's database
// (tests/outbox_crash_audit.h): every message of a committed step reached the consumer, each
// was processed exactly once, nothing else was processed. It prints how many duplicates the
// broker absorbed (acks the dispatcher recorded as duplicate) and the consumer skipped, and
// how many copies the stream holds for the outbox's messages (as many, while the duplicate
// window holds), and checks that both kinds of duplicate occurred.
//
// RECKON_OUTBOX_CRASH_KILLS: kill points (default 12; the heavy tier raises it).
// RECKON_OUTBOX_CRASH_SEED: the seed of the delays and targets (printed). A failing run's files
// (journal, consumer database, broker store, logs) are kept under $TMPDIR (or /tmp);
// RECKON_OUTBOX_CRASH_KEEP=1 keeps them after a passing run too (and fails it).
#include <gtest/gtest.h>

#include <sqlite3.h>

#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <random>
#include <thread>

#include "reckon/storage/sqlite/sqlite.h"
#include "tests/outbox_crash_audit.h"
#include "tests/support/crash_support.h"
#include "tests/support/nats_server.h"
#include "tests/support/reckon_server.h"
#include "tests/support/temp_dir.h"

namespace reckon::testing {
namespace {

using namespace std::chrono_literals;
namespace json = boost::json;
using SteadyClock = std::chrono::steady_clock;

constexpr std::uint64_t kDefaultSeed = 20261201;
constexpr int kWorkflowsPerKill = 6;
constexpr int kMessagesPerWorkflow = 2;
constexpr const char* kStream = "CRASH";
constexpr const char* kSubject = "crash.effects";
constexpr auto kDrainTimeout = 120s;

enum class Target { kServer, kBroker, kConsumer };
const char* Name(Target t) {
  return t == Target::kServer ? "server" : t == Target::kBroker ? "broker" : "consumer";
}

// Mostly short (a kill lands among publishes, dispatches and deliveries just begun), some up to
// 1 s (a restarted process is recovering or retrying), a few longer (things settle between).
std::chrono::milliseconds DrawDelay(std::mt19937_64& rng) {
  auto uniform = [&rng](int low, int high) {
    return std::chrono::milliseconds(std::uniform_int_distribution<int>(low, high)(rng));
  };
  const int band = std::uniform_int_distribution<int>(0, 99)(rng);
  if (band < 40) return uniform(0, 250);
  if (band < 85) return uniform(250, 1000);
  return uniform(1000, 2500);
}

// What the test sees of the journal and the consumer's database while everything runs.
struct Progress {
  std::int64_t completed = 0;  // runs completed
  std::int64_t outbox = 0;     // messages in the outbox
  std::int64_t pending = 0;    // not acknowledged yet
  std::int64_t processed = -1; // the consumer's report (-1: no answer)
  std::string ToString() const {
    return std::to_string(completed) + " workflows completed, " + std::to_string(outbox) +
           " outbox messages (" + std::to_string(pending) + " pending), consumer processed " +
           std::to_string(processed);
  }
};

struct Tally {
  int kills[3] = {0, 0, 0};
  int busy = 0;  // kill points with a message not yet acked or not yet processed
};

class OutboxCrashRun {
 public:
  explicit OutboxCrashRun(std::uint64_t seed) : rng_(seed) {}

  // Broker (with the stream), server with its dispatcher, worker, consumer.
  bool Boot() {
    auto broker = NatsServer::Start({.program = RECKON_NATS_SERVER, .dir = dir_.path()});
    if (!broker) return Fail("nats-server: " + broker.error().ToString());
    broker_ = std::move(broker).value();
    if (auto declared = broker_->AddStream(kStream, {"crash.>"}, 2min); !declared) {
      return Fail(declared.error().ToString());
    }
    auto server = ReckonServer::Start(
        RECKON_CLI, {"--nats-url", broker_->url(), "--lease-timeout-ms", "1500",
                     "--heartbeat-ms", "300"});
    if (!server) return Fail("reckon server: " + server.error().ToString());
    server_ = std::move(server).value();
    if (auto started = server_->StartWorker(RECKON_TEST_WORKER, "worker"); !started) {
      return Fail("reckon-test-worker: " + started.error().ToString());
    }
    return StartConsumer();
  }

  bool StartConsumer() {
    SubprocessOptions options;
    options.args = {"--nats-url", broker_->url(), "--stream",  kStream, "--subject", "crash.>",
                    "--durable",  "crash-test",   "--db",      consumer_db(),
                    "--ack-wait-ms", "1000", "--batch", "8", "--work-ms", "20"};
    options.stderr_path = dir_.File("consumer.log");
    std::ofstream(options.stderr_path, std::ios::app)
        << "=== consumer life " << ++consumer_lives_ << "\n";
    auto consumer = Subprocess::Start(RECKON_OUTBOX_CONSUMER, std::move(options));
    if (!consumer) return Fail("reckon-outbox-consumer: " + consumer.error().ToString());
    consumer_.emplace(std::move(consumer).value());
    return true;
  }

  // Launches `count` new workflows with as many `reckon start` at once, without waiting.
  bool LaunchStarts(int count) {
    for (int i = 0; i < count; ++i) {
      const std::string id = "pub-" + std::to_string(workflows_.size());
      SubprocessOptions options;
      options.args = {"start", id, "--type", "call_then_publish", "--input", Input(),
                      "--token-file", server_->TokenFile("operator"), "--server",
                      server_->address()};
      options.env = server_->client_env();
      options.stderr_path = dir_.File("starts.log");
      auto start = Subprocess::Start(RECKON_CLI, std::move(options));
      if (!start) return Fail("reckon start: " + start.error().ToString());
      launched_.emplace_back(id, std::move(start).value());
      workflows_.push_back(id);
    }
    return true;
  }

  // Collects the launched starts. One that failed (the server was killed under it, or the
  // worker had not registered again yet) is started once more: a start is idempotent on the
  // workflow id, so one that did reach the journal is not started twice.
  bool FinishStarts() {
    for (auto& [id, process] : launched_) {
      (void)process.ReadAll(60s);
      auto status = process.Wait();
      if (status && status.value().Succeeded()) continue;
      ++restarted_starts_;
      const std::size_t n = std::stoul(id.substr(4));
      CliRun run = server_->StartWorkflow(id, "call_then_publish", Input(n));
      if (run.code() != 0) return Fail("reckon start " + id + " (again): " + run.Describe());
    }
    launched_.clear();
    return true;
  }

  // call_then_publish's input for workflow pub-`n` (default: the next one).
  std::string Input(std::size_t n = static_cast<std::size_t>(-1)) const {
    if (n == static_cast<std::size_t>(-1)) n = workflows_.size();
    return json::serialize(json::object{
        {"tool", "charge"},
        {"input", {{"account", "acct-" + std::to_string(n)},
                   {"amount_cents", 100 + static_cast<std::int64_t>(n)}}},
        {"subject", kSubject},
        {"messages", kMessagesPerWorkflow}});
  }

  // Freezes the broker (SIGSTOP), starts two more workflows and waits until one of their
  // messages committed: the dispatcher has sent it (or is about to) and waits for an ack.
  bool FreezeBrokerWithAPublishInFlight() {
    if (auto paused = broker_->Pause(); !paused) return Fail(paused.error().ToString());
    if (!LaunchStarts(2)) return false;
    const auto until = SteadyClock::now() + 2s;
    while (Observe(/*with_consumer=*/false).pending == 0 && SteadyClock::now() < until) {
      std::this_thread::sleep_for(10ms);
    }
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 50)(rng_)));
    return true;
  }

  // Every other kill of the server and of the broker (the first included) comes with a
  // publish in flight to a frozen broker. The server dies: the broker stores the message when
  // it resumes, no life recorded its ack, and the next life publishes it again (a duplicate
  // the broker absorbs). The broker dies: the message it never read is lost, the publish
  // times out (a failed attempt) and is retried.
  bool KillAndRestart(Target target) {
    if (!CheckAlive()) return false;
    switch (target) {
      case Target::kServer: {
        const bool freeze = server_kills_++ % 2 == 0;
        if (freeze && !FreezeBrokerWithAPublishInFlight()) return false;
        frozen_kills_ += freeze ? 1 : 0;
        auto killed = server_->KillServer();
        if (freeze) (void)broker_->Resume();
        if (!killed) return Fail(killed.error().ToString());
        if (auto back = server_->RestartServer(); !back) return Fail(back.error().ToString());
        return true;
      }
      case Target::kBroker: {
        const bool freeze = broker_kills_++ % 2 == 0;
        if (freeze && !FreezeBrokerWithAPublishInFlight()) return false;
        frozen_kills_ += freeze ? 1 : 0;
        if (auto killed = broker_->Kill(); !killed) return Fail(killed.error().ToString());
        if (auto back = broker_->Restart(); !back) return Fail(back.error().ToString());
        if (freeze) {
          // The lost publish waits out its ack timeout (5 s) before it fails and is retried;
          // let that finish, or a server kill soon after would erase the failed attempt.
          const auto until = SteadyClock::now() + 20s;
          while (Observe(/*with_consumer=*/false).pending != 0 && SteadyClock::now() < until) {
            std::this_thread::sleep_for(50ms);
          }
        }
        return true;
      }
      case Target::kConsumer:
        if (auto killed = consumer_->Kill(SIGKILL); !killed) return Fail(killed.error().ToString());
        (void)consumer_->Wait();
        return StartConsumer();
    }
    return false;
  }

  // False (with the failure recorded) if a process ended without being killed.
  bool CheckAlive() {
    if (auto ended = consumer_->WaitFor(0ms); ended) {
      return Fail("reckon-outbox-consumer " + ended.value().ToString() + " by itself");
    }
    if (!broker_->running()) return Fail("nats-server ended by itself");
    return true;
  }

  Progress Observe(bool with_consumer = true) {
    Progress p;
    auto journal = storage::SqliteDb::Open(server_->journal_path(), /*read_only=*/true);
    if (journal) {
      sqlite3_busy_timeout(journal.value().handle(), 2000);
      auto count = [&journal](const char* sql) -> std::int64_t {
        auto n = journal.value().QueryInt(sql);
        return n ? n.value() : -1;
      };
      p.completed = count("SELECT count(*) FROM runs WHERE status = 'completed'");
      p.outbox = count("SELECT count(*) FROM outbox");
      p.pending = count("SELECT count(*) FROM outbox WHERE published_at_us = 0");
    }
    if (with_consumer) p.processed = ConsumerReport("processed");
    return p;
  }

  // A figure of `reckon-outbox-consumer --report --json` (-1 if it did not answer).
  std::int64_t ConsumerReport(const char* key) {
    SubprocessOptions options;
    options.args = {"--report", "--json", "--db", consumer_db()};
    options.stderr_path = dir_.File("report.log");
    auto report = Subprocess::Start(RECKON_OUTBOX_CONSUMER, std::move(options));
    if (!report) return -1;
    auto out = report.value().ReadAll(30s);
    auto status = report.value().Wait();
    if (!out || !status || !status.value().Succeeded()) return -1;
    boost::system::error_code ec;
    json::value parsed = json::parse(out.value(), ec);
    if (ec || !parsed.is_object() || !parsed.as_object().contains(key)) return -1;
    return parsed.as_object().at(key).to_number<std::int64_t>();
  }

  // Waits until every workflow completed, nothing is pending and the consumer caught up.
  bool Drain(double& seconds) {
    const auto began = SteadyClock::now();
    Progress p;
    for (;;) {
      if (!CheckAlive()) return false;
      p = Observe();
      const auto n = static_cast<std::int64_t>(workflows_.size());
      if (p.completed == n && p.outbox == n * kMessagesPerWorkflow && p.pending == 0 &&
          p.processed == p.outbox) {
        break;
      }
      if (SteadyClock::now() - began > kDrainTimeout) {
        return Fail("not drained 120 s after the last kill: " + p.ToString());
      }
      std::this_thread::sleep_for(200ms);
    }
    seconds = std::chrono::duration<double>(SteadyClock::now() - began).count();
    return true;
  }

  bool StopAll() {
    auto consumer = consumer_->Terminate(10s);
    if (!consumer || !consumer.value().Succeeded()) {
      return Fail("reckon-outbox-consumer on SIGTERM: " +
                  (consumer ? consumer.value().ToString() : consumer.error().ToString()));
    }
    if (auto stopped = server_->Stop(); !stopped) return Fail(stopped.error().ToString());
    if (auto stopped = broker_->Stop(); !stopped) return Fail(stopped.error().ToString());
    return true;
  }

  bool Fail(const std::string& what) {
    std::string logs;
    for (const std::string& file : {dir_.File("consumer.log"), dir_.File("nats-server.log")}) {
      logs += "\n--- " + file + " (tail)\n" + Tail(file, 2000);
    }
    if (server_) {
      logs += "\n--- server.log (tail)\n" + Tail(server_->dir().File("server.log"), 3000);
      logs += "\n--- worker.log (tail)\n" + Tail(server_->dir().File("worker.log"), 1500);
      logs += "\nserver files kept in " + KeepEvidence(server_->dir().path(), "reckon-outbox-crash-server");
    }
    ADD_FAILURE() << what << logs << "\nbroker and consumer files kept in "
                  << KeepEvidence(dir_.path(), "reckon-outbox-crash");
    return false;
  }

  std::string consumer_db() const { return dir_.File("consumer.db"); }
  std::mt19937_64& rng() { return rng_; }
  const std::vector<std::string>& workflows() const { return workflows_; }
  std::string journal() const { return server_->journal_path(); }
  std::int64_t StreamCopies() {
    auto state = broker_->StreamState(kStream);
    return state ? state.value().messages : -1;
  }
  bool RestartBrokerForCount() { return static_cast<bool>(broker_->Restart()); }

 private:
  std::mt19937_64 rng_;
  TempDir dir_;  // the broker's store and log, the consumer's database and log
  std::unique_ptr<NatsServer> broker_;
  std::unique_ptr<ReckonServer> server_;
  std::optional<Subprocess> consumer_;
  int consumer_lives_ = 0;
  std::vector<std::string> workflows_;
  std::vector<std::pair<std::string, Subprocess>> launched_;  // starts not collected yet
  int restarted_starts_ = 0;
  int server_kills_ = 0, broker_kills_ = 0;
  int frozen_kills_ = 0;  // server and broker kills with a publish in flight to a frozen broker

 public:
  int restarted_starts() const { return restarted_starts_; }
  int frozen_kills() const { return frozen_kills_; }
};

TEST(OutboxCrash, EveryCommittedMessageIsProcessedOnceThroughKillsOfEveryProcess) {
  const std::uint64_t seed = EnvNumber("RECKON_OUTBOX_CRASH_SEED", kDefaultSeed);
  const int kill_points = static_cast<int>(EnvNumber("RECKON_OUTBOX_CRASH_KILLS", 12));
  std::printf("[outbox crash] seed=%llu (RECKON_OUTBOX_CRASH_SEED) kill points=%d "
              "(RECKON_OUTBOX_CRASH_KILLS)\n",
              static_cast<unsigned long long>(seed), kill_points);
  std::fflush(stdout);
  const auto began = SteadyClock::now();
  OutboxCrashRun run(seed);
  ASSERT_TRUE(run.Boot());

  std::vector<Target> deck;
  for (int k = 0; k < kill_points; ++k) deck.push_back(static_cast<Target>(k % 3));
  std::shuffle(deck.begin(), deck.end(), run.rng());
  Tally tally;
  for (std::size_t k = 0; k < deck.size(); ++k) {
    const Target target = deck[k];
    // The kill point's workflows are started one by one across the delay, so that whatever
    // the delay, the kill finds the latest ones starting, calling, committing or publishing.
    const std::chrono::milliseconds delay = DrawDelay(run.rng());
    for (int i = 0; i < kWorkflowsPerKill; ++i) {
      ASSERT_TRUE(run.LaunchStarts(1));
      std::this_thread::sleep_for(delay / kWorkflowsPerKill);
    }
    const Progress seen = run.Observe();
    if (seen.pending > 0 || seen.processed < seen.outbox) ++tally.busy;
    std::printf("[outbox crash] kill %zu: %s after %lld ms (%s)\n", k + 1, Name(target),
                static_cast<long long>(delay.count()), seen.ToString().c_str());
    std::fflush(stdout);
    ASSERT_TRUE(run.KillAndRestart(target));
    ++tally.kills[static_cast<int>(target)];
    ASSERT_TRUE(run.FinishStarts());
  }
  ASSERT_TRUE(run.LaunchStarts(kWorkflowsPerKill));  // and some after the last kill
  ASSERT_TRUE(run.FinishStarts());
  const double killing_s = std::chrono::duration<double>(SteadyClock::now() - began).count();
  double drained_s = 0;
  ASSERT_TRUE(run.Drain(drained_s));
  ASSERT_TRUE(run.StopAll());
  // The stream's copies are counted on a broker of their own after the stop (the same store).
  std::int64_t stream_copies = -1;
  if (run.RestartBrokerForCount()) stream_copies = run.StreamCopies();

  // call_then_publish's steps: the charge is step 1, the publishes come after it.
  std::vector<std::string> publish_steps;
  for (int n = 1; n <= kMessagesPerWorkflow; ++n) {
    publish_steps.push_back("publish#" + std::to_string(n + 1));
  }
  auto audit = AuditOutbox(run.journal(), run.consumer_db(), run.workflows(), publish_steps);
  ASSERT_TRUE(audit) << audit.error().ToString();
  const OutboxFigures& f = audit.value().figures;
  std::printf("[outbox crash] kills: server %d, broker %d, consumer %d (%d found a message "
              "unacked or unprocessed; %d came with a publish in flight to a frozen broker); "
              "%zu workflows (%d starts repeated after a kill); killing %.1f s, drained in "
              "%.1f s, total %.1f s\n[outbox crash] %s\n[outbox crash] the stream holds %lld "
              "cop(ies) for %lld outbox messages\n",
              tally.kills[0], tally.kills[1], tally.kills[2], tally.busy, run.frozen_kills(),
              run.workflows().size(), run.restarted_starts(), killing_s, drained_s,
              std::chrono::duration<double>(SteadyClock::now() - began).count(),
              f.ToString().c_str(), static_cast<long long>(stream_copies),
              static_cast<long long>(f.outbox_messages));
  std::fflush(stdout);
  if (!audit.value().violations.empty()) {
    std::string listed;
    for (const std::string& v : audit.value().violations) listed += "\n  " + v;
    run.Fail(std::to_string(audit.value().violations.size()) + " invariant(s) broken:" + listed);
  }
  EXPECT_EQ(f.outbox_messages,
            static_cast<std::int64_t>(run.workflows().size()) * kMessagesPerWorkflow);
  EXPECT_GT(tally.busy, 0) << "no kill found a message in flight (seed " << seed << ")";
  // The paths of the duplicates were walked: the broker absorbed a message published again
  // by a later server life, the consumer skipped a message delivered again.
  EXPECT_GT(f.broker_duplicates, 0) << "the broker absorbed no duplicate (seed " << seed << ")";
  EXPECT_GT(f.consumer_duplicates, 0) << "the consumer skipped no copy (seed " << seed << ")";
  EXPECT_GT(f.failed_attempts, 0) << "no publish failed: the retry path was not walked (seed "
                                  << seed << ")";
  if (EnvNumber("RECKON_OUTBOX_CRASH_KEEP", 0) != 0) run.Fail("kept on request");
}

}  // namespace
}  // namespace reckon::testing
