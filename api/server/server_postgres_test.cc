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
#include <optional>
#include <thread>
#include <vector>

#include "reckon/storage/backend/open_backend.h"
#include "tests/support/postgres_server.h"
#include "tests/support/reckon_server.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

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

// Issue 30, item 3: a `reckon server --cluster` is refused a database that a single server
// holds (it used to join it and take all 64 shards beside it), and a single server is refused
// one that a cluster holds; each ends by itself with code 1 and says what holds the database
// and what to do.
// `reckon server --journal URL ...extra`, its files in `dir` under `name`.
ServerStart StartPostgresServer(const TempDir& dir, const std::string& name,
                                const std::string& url, std::vector<std::string> extra,
                                std::optional<Subprocess>& process) {
  std::vector<std::string> args = {"--journal", url, "--listen", "127.0.0.1:0",
                                   "--admin-token-file", dir.File("admin.token"), "--trace",
                                   dir.File(name + ".trace.jsonl"), "--quiet"};
  args.insert(args.end(), extra.begin(), extra.end());
  return StartServerOnce(RECKON_CLI_PATH, dir, name, std::move(args), process);
}

TEST(ServerPostgresTest, AClusterServerAndASingleServerNeverShareADatabase) {
  auto postgres = PostgresServer::Start();
  ASSERT_TRUE(postgres) << postgres.error().ToString();
  auto database = postgres.value()->CreateDatabase("reckon_owner");
  ASSERT_TRUE(database) << database.error().ToString();
  const std::string url = database.value();
  TempDir dir;
  const std::vector<std::string> cluster = {"--cluster", "--shard-lease-ms", "1000",
                                            "--server-id", "member-1"};

  std::optional<Subprocess> single;
  ServerStart first = StartPostgresServer(dir, "single", url, {}, single);
  ASSERT_TRUE(first.served) << first.log;
  std::optional<Subprocess> member;
  ServerStart joined = StartPostgresServer(dir, "member", url, cluster, member);
  EXPECT_FALSE(joined.served) << "a cluster member joined a single server's database:\n"
                              << joined.log;
  EXPECT_TRUE(joined.status.exited && joined.status.code == 1) << joined.status.ToString();
  EXPECT_NE(joined.log.find("is owned by a single server (not a cluster member)"),
            std::string::npos)
      << joined.log;
  EXPECT_NE(joined.log.find("start it again with --cluster"), std::string::npos) << joined.log;
  ASSERT_TRUE(single->running()) << "the single server must keep serving";
  auto stopped = single->Terminate();
  ASSERT_TRUE(stopped && stopped.value().Succeeded());

  ServerStart member_alone = StartPostgresServer(dir, "member-alone", url, cluster, member);
  ASSERT_TRUE(member_alone.served) << member_alone.log;
  std::optional<Subprocess> second_single;
  ServerStart taken = StartPostgresServer(dir, "single-again", url, {}, second_single);
  EXPECT_FALSE(taken.served) << "a single server took a cluster's database:\n" << taken.log;
  EXPECT_TRUE(taken.status.exited && taken.status.code == 1) << taken.status.ToString();
  EXPECT_NE(taken.log.find("is held by a cluster (1 member session(s)"), std::string::npos)
      << taken.log;
  EXPECT_NE(taken.log.find("start this server with --cluster"), std::string::npos) << taken.log;
  ASSERT_TRUE(member->running()) << "the cluster member must keep serving";
  auto member_stopped = member->Terminate();
  ASSERT_TRUE(member_stopped && member_stopped.value().Succeeded());
}

}  // namespace
}  // namespace reckon::testing
