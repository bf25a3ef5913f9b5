// The agent loop survives SIGKILL without asking the model or the tools twice. A payments
// provider and a fake OpenAI-compatible model server (fake-chat-server, which counts the
// requests it serves) stay up; agent-loop (--model http) is started and SIGKILLed at random
// delays, again and again, then left to finish. Then:
//   - the loop completed, after exactly 3 rounds (the model's script);
//   - the model served at most as many requests as the journal holds model.propose attempts:
//     every request was journaled before it was sent, and a reply that was journaled was
//     never asked for again (replay reads it from the journal);
//   - the ledger holds exactly one refund per committed send_refund, under its operation id,
//     and none for anything else.
//
// RECKON_AGENT_CRASH_KILLS: kill points (default 12; the heavy tier raises it).
// RECKON_AGENT_CRASH_SEED: the seed of the delays (printed). Failing files are kept.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "samples/agent/default_script.h"
#include "reckon/storage/sqlite/sqlite_journal.h"
#include "tests/refund_crash_audit.h"
#include "tests/support/crash_support.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace reckon::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
namespace json = boost::json;

int ReadCount(const fs::path& file) {
  std::ifstream in(file);
  int count = -1;
  in >> count;
  return count;
}

struct Journaled {
  int model_attempts = 0;   // AttemptStarted of model.propose operations
  int model_committed = 0;  // committed model.propose operations
  std::map<std::string, std::string> refunds_committed;  // operation id -> provider ref
  storage::RunStatus status = storage::RunStatus::kRunning;
};

Journaled ReadJournal(const std::string& path) {
  Journaled j;
  storage::SqliteJournalOptions read_only;
  read_only.mode = storage::SqliteJournalOptions::Mode::kReadOnly;
  auto journal = storage::OpenSqliteJournal(path, read_only);
  EXPECT_TRUE(journal) << journal.error().ToString();
  if (!journal) return j;
  auto run = journal.value()->FindLatestRun("agent-1");
  EXPECT_TRUE(run && run.value());
  if (!run || !run.value()) return j;
  j.status = run.value()->status;
  auto events = journal.value()->ReadEvents(run.value()->ref);
  EXPECT_TRUE(events);
  std::map<std::string, std::string> tool_of;
  for (const storage::Event& e : events.value()) {
    if (const auto* p = std::get_if<storage::OperationPrepared>(&e.body)) {
      tool_of[p->operation_id] = p->tool;
    } else if (const auto* a = std::get_if<storage::AttemptStarted>(&e.body)) {
      if (tool_of[a->operation_id] == "model.propose") ++j.model_attempts;
    } else if (const auto* c = std::get_if<storage::OperationCommitted>(&e.body)) {
      if (tool_of[c->operation_id] == "model.propose") ++j.model_committed;
      if (tool_of[c->operation_id] == "send_refund") {
        j.refunds_committed[c->operation_id] = c->provider_ref;
      }
    }
  }
  return j;
}

// One epoch: fresh provider, model server and journal; up to `kills` kill points, then the loop
// runs to its end and everything is checked. Returns the kill points that hit a running loop.
int RunEpoch(std::uint64_t seed, int kills) {
  std::mt19937_64 random(seed);
  TempDir dir;
  // On any failure (ASSERTs return early), keep the files for a post-mortem.
  struct KeepOnFailure {
    const TempDir& dir;
    std::uint64_t seed;
    ~KeepOnFailure() {
      if (!::testing::Test::HasFailure()) return;
      const fs::path kept = fs::path("/tmp") / ("reckon-agent-crash-" + std::to_string(seed));
      std::error_code ec;
      fs::remove_all(kept, ec);
      fs::copy(dir.path(), kept, fs::copy_options::recursive, ec);
      std::printf("files kept in %s\n", kept.c_str());
    }
  } keep{dir, seed};
  {
    json::array script;
    for (const std::string& reply : agent::DefaultScript()) script.emplace_back(reply);
    std::ofstream(dir.File("script.json")) << json::serialize(script);
  }
  SubprocessOptions provider_options;
  // Slow commits and lost replies, so that kills land while refunds are in flight.
  provider_options.args = {"--port", "0", "--ledger", dir.File("ledger.db"), "--seed", "3",
                           "--delay-ms", "120", "--drop-reply-rate", "0.3"};
  provider_options.stderr_path = dir.File("provider.log");
  auto provider = StartListening(RECKON_PAYMENTS_PROVIDER, provider_options);
  EXPECT_TRUE(provider) << provider.error().ToString();
  if (!provider) return 0;
  SubprocessOptions model_options;
  // Replies by turn: a request re-sent after a kill gets the reply the lost one would have.
  model_options.args = {"--port",       "0", "--script", dir.File("script.json"), "--count-file",
                        dir.File("model_requests"), "--reply-by", "turn"};
  model_options.stderr_path = dir.File("model.log");
  auto model = StartListening(RECKON_FAKE_CHAT_SERVER, model_options);
  EXPECT_TRUE(model) << model.error().ToString();
  if (!model) return 0;

  auto agent_options = [&] {
    SubprocessOptions o;
    o.args = {"--journal",   dir.File("journal.db"),
              "--provider",  "http://127.0.0.1:" + std::to_string(provider.value().port),
              "--model",     "http",
              "--model-url", "http://127.0.0.1:" + std::to_string(model.value().port),
              "--model-name", "fake", "--approve-all"};
    o.stderr_path = dir.File("agent.log");
    return o;
  };
  int hit = 0;
  for (int k = 0; k < kills; ++k) {
    auto agent = Subprocess::Start(RECKON_AGENT_LOOP, agent_options());
    EXPECT_TRUE(agent) << agent.error().ToString();
    if (!agent) return hit;
    const auto delay = std::chrono::milliseconds(10 + random() % 400);
    auto ended = agent.value().WaitFor(delay);
    if (ended) {
      EXPECT_TRUE(ended.value().Succeeded()) << ended.value().ToString();
      break;  // finished before its kill point
    }
    EXPECT_TRUE(agent.value().Kill(SIGKILL));
    (void)agent.value().Wait();
    ++hit;
  }
  auto last = Subprocess::Start(RECKON_AGENT_LOOP, agent_options());
  EXPECT_TRUE(last);
  if (!last) return hit;
  auto finished = last.value().WaitFor(60s);
  EXPECT_TRUE(finished) << "the loop did not finish in 60 s";
  if (!finished) return hit;
  EXPECT_TRUE(finished.value().Succeeded()) << finished.value().ToString();

  const Journaled j = ReadJournal(dir.File("journal.db"));
  const int served = ReadCount(dir.File("model_requests"));
  std::printf("[agent crash] epoch seed %llu: %d kills hit a running loop; model: %d requests "
              "served, %d attempts "
              "journaled, %d replies committed; %zu refunds committed\n",
              static_cast<unsigned long long>(seed), hit, served, j.model_attempts,
              j.model_committed, j.refunds_committed.size());
  EXPECT_EQ(j.status, storage::RunStatus::kCompleted);
  EXPECT_EQ(j.model_committed, 3) << "three rounds: lookups, refunds, done";
  EXPECT_GE(served, 3);
  EXPECT_LE(served, j.model_attempts)
      << "a model request that no journaled attempt accounts for was asked twice";
  auto refunds = FetchRefunds(provider.value().port);
  EXPECT_TRUE(refunds) << refunds.error().ToString();
  if (!refunds) return hit;
  EXPECT_EQ(refunds.value().size(), j.refunds_committed.size());
  EXPECT_EQ(j.refunds_committed.size(), 2u);
  std::map<std::string, int> per_key;
  for (const LedgerRefund& r : refunds.value()) ++per_key[r.idempotency_key];
  for (const auto& [op, ref] : j.refunds_committed) {
    EXPECT_EQ(per_key[op], 1) << "operation " << op;
  }
  return hit;
}

TEST(AgentLoopCrashTest, SurvivesSigkillWithoutAskingTheModelOrTheToolsTwice) {
  const std::uint64_t seed = EnvNumber("RECKON_AGENT_CRASH_SEED", 20261130);
  const int kills = static_cast<int>(EnvNumber("RECKON_AGENT_CRASH_KILLS", 12));
  std::printf("[agent crash] seed=%llu (RECKON_AGENT_CRASH_SEED) kill points=%d "
              "(RECKON_AGENT_CRASH_KILLS)\n", static_cast<unsigned long long>(seed), kills);
  // Epochs until the kill points are spent: a loop finishes after ~12 kills at these delays.
  int hit = 0;
  for (int epoch = 0; hit < kills && !::testing::Test::HasFailure(); ++epoch) {
    const int got = RunEpoch(seed + static_cast<std::uint64_t>(epoch), kills - hit);
    hit += std::max(got, 1);
  }
}

}  // namespace
}  // namespace reckon::testing
