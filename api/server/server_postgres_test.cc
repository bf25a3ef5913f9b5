// `reckon server --journal postgresql://...`: the real server on a private PostgreSQL
// (tests/support/postgres_server.h) with a real worker. Workflows complete, the principals and
// tokens live in the database, `reckon show` and `reckon outbox list` read it, and a SIGKILLed
// server restarted on the same database finds what it acknowledged and goes on.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "reckon/storage/backend/open_backend.h"
#include "tests/support/postgres_server.h"
#include "tests/support/reckon_server.h"

namespace reckon::testing {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

std::string ChargeInput(int cents) {
  return json::serialize(json::object{
      {"tool", "charge"},
      {"input", json::object{{"account", "acct-pg"}, {"amount_cents", cents}}}});
}

// Waits until `reckon show ID` says the run completed.
bool Completes(ReckonServer& server, const std::string& id) {
  for (int i = 0; i < 300; ++i) {
    const CliRun shown = server.Cli({"show", id, "--token-file", server.TokenFile("reader")});
    if (shown.code() == 0 && shown.out.find("completed") != std::string::npos) return true;
    std::this_thread::sleep_for(100ms);
  }
  return false;
}

TEST(ServerPostgresTest, RunsWorkflowsAndSurvivesAKill) {
  auto postgres = PostgresServer::Start();
  ASSERT_TRUE(postgres) << postgres.error().ToString();
  auto database = postgres.value()->CreateDatabase("reckon_server");
  ASSERT_TRUE(database) << database.error().ToString();
  const std::string url = database.value();

  ReckonServerOptions options;
  options.journal = url;
  auto server = ReckonServer::Start(RECKON_CLI_PATH, options);
  ASSERT_TRUE(server) << server.error().ToString();
  auto worker = server.value()->StartWorker(RECKON_TEST_WORKER, "worker");
  ASSERT_TRUE(worker) << worker.error().ToString();

  const CliRun first = server.value()->StartWorkflow("pg-1", "call_once", ChargeInput(100));
  ASSERT_EQ(first.code(), 0) << first.Describe();
  ASSERT_TRUE(Completes(*server.value(), "pg-1"));

  ASSERT_TRUE(server.value()->KillServer());
  auto restarted = server.value()->RestartServer();
  ASSERT_TRUE(restarted) << restarted.error().ToString();
  ASSERT_TRUE(Completes(*server.value(), "pg-1"));  // acknowledged before the kill: kept
  const CliRun second = server.value()->StartWorkflow("pg-2", "call_once", ChargeInput(200));
  ASSERT_EQ(second.code(), 0) << second.Describe();
  ASSERT_TRUE(Completes(*server.value(), "pg-2"));

  // PostgreSQL restarts under the running server: whether the commit in flight landed is
  // unknown, so the server's next write stops the engine and the process exits for a
  // supervisor to restart it; the restarted server recovers and goes on.
  ASSERT_TRUE(postgres.value()->Crash());
  ASSERT_TRUE(postgres.value()->Restart());
  (void)server.value()->Cli({"start", "pg-3", "--type", "call_once", "--input", ChargeInput(300)});
  bool exited = false;
  for (int i = 0; i < 300 && !exited; ++i) {
    std::ifstream log(server.value()->dir().File("server.log"));
    const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    exited = text.find("stopping: the connection to the journal's database was lost") !=
                 std::string::npos ||
             text.find("engine stopped") != std::string::npos;
    if (!exited) std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(exited) << "the server did not stop after PostgreSQL restarted";
  (void)server.value()->KillServer();  // reaps it (it may have exited already)
  auto again = server.value()->RestartServer();
  ASSERT_TRUE(again) << again.error().ToString();
  const CliRun third = server.value()->StartWorkflow("pg-3", "call_once", ChargeInput(300));
  ASSERT_EQ(third.code(), 0) << third.Describe();
  ASSERT_TRUE(Completes(*server.value(), "pg-3"));

  const CliRun listed =
      server.value()->Cli({"list", "--status", "completed", "--token-file",
                           server.value()->TokenFile("reader")});
  EXPECT_EQ(listed.code(), 0) << listed.Describe();
  EXPECT_NE(listed.out.find("pg-1"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("pg-2"), std::string::npos) << listed.out;
  auto stopped = server.value()->Stop();
  ASSERT_TRUE(stopped) << stopped.error().ToString();

  // Everything is in the database: no SQLite file was made, and the runs read back from it.
  EXPECT_FALSE(std::filesystem::exists(server.value()->journal_path()));
  auto journal = storage::OpenJournal(url);
  ASSERT_TRUE(journal) << journal.error().ToString();
  for (const char* id : {"pg-1", "pg-2", "pg-3"}) {
    auto run = journal.value()->FindLatestRun(id);
    ASSERT_TRUE(run) << run.error().ToString();
    ASSERT_TRUE(run.value().has_value()) << id;
    EXPECT_EQ(run.value()->status, storage::RunStatus::kCompleted) << id;
  }
}

}  // namespace
}  // namespace reckon::testing
