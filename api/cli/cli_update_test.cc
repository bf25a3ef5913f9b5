// `reckon query` and `reckon update` against a real server and a real worker over TCP
// (reckon-test-worker hosts the "ledger" workflow, host/testing/test_workflows.h): a query
// journals nothing, a rejected update journals nothing, an accepted one answers and a repeated
// id answers the same without running twice, and an update whose handler was cut off by a
// SIGKILL of the server finishes after the restart with one answer and one effect.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "tests/support/reckon_server.h"

namespace reckon::testing {
namespace {

namespace json = boost::json;

class CliUpdateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A short query timeout (the default is 10 s), so that the orphan query below fails fast.
    auto server = ReckonServer::Start(RECKON_CLI_PATH, {"--query-timeout-ms", "1500"});
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(server).value();
    auto worker = server_->StartWorker(RECKON_TEST_WORKER, "worker");
    ASSERT_TRUE(worker) << worker.error().ToString();
  }

  CliRun Cli(std::vector<std::string> args) { return server_->Cli(std::move(args)); }

  void StartLedger(const std::string& id) {
    const CliRun run = server_->StartWorkflow(id, "ledger", "{}");
    ASSERT_EQ(run.code(), 0) << run.Describe();
    // Waiting for "stop": the run's code has registered its handlers.
    ASSERT_TRUE(Eventually([&] {
      const CliRun shown = Cli({"show", id, "--json"});
      return shown.code() == 0 && json::parse(shown.out).at("waits_on") == "signal";
    })) << Cli({"show", id}).out;
  }

  // The events of `reckon history ID --json` (of type `type`, when given).
  std::vector<json::object> Events(const std::string& id, const std::string& type = "") {
    const CliRun run = Cli({"history", id, "--json"});
    EXPECT_EQ(run.code(), 0) << run.Describe();
    std::vector<json::object> out;
    if (run.code() != 0) return out;
    const json::value history = json::parse(run.out);
    for (const json::value& event : history.as_array()) {
      if (type.empty() || event.at("type") == type.c_str()) {
        out.push_back(event.at("event").as_object());
      }
    }
    return out;
  }

  std::unique_ptr<ReckonServer> server_;
};

TEST_F(CliUpdateTest, QueriesAndUpdatesOverTcp) {
  StartLedger("l-1");
  const std::size_t before = Events("l-1").size();

  const CliRun total = Cli({"query", "l-1", "total"});
  ASSERT_EQ(total.code(), 0) << total.Describe();
  EXPECT_EQ(total.out, "{\"total\":0}\n");
  const CliRun as_json = Cli({"query", "l-1", "total", "--json"});
  ASSERT_EQ(as_json.code(), 0) << as_json.Describe();
  EXPECT_EQ(json::parse(as_json.out).at("result").at("total").as_int64(), 0);

  const CliRun rejected = Cli({"update", "l-1", "add", R"({"n": -2})"});
  EXPECT_NE(rejected.code(), 0);
  EXPECT_NE(rejected.err.find("positive whole number"), std::string::npos) << rejected.Describe();
  EXPECT_EQ(Events("l-1").size(), before);  // neither the query nor the rejection journaled

  const CliRun added = Cli({"update", "l-1", "add", R"({"n": 5})", "--update-id", "a-1", "--json"});
  ASSERT_EQ(added.code(), 0) << added.Describe();
  const json::value answer = json::parse(added.out);
  EXPECT_EQ(answer.at("update_id"), "a-1");
  EXPECT_EQ(answer.at("result").at("total").as_int64(), 5);
  const CliRun again = Cli({"update", "l-1", "add", R"({"n": 5})", "--update-id", "a-1"});
  ASSERT_EQ(again.code(), 0) << again.Describe();
  EXPECT_EQ(again.out, "update a-1: {\"total\":5}\n");
  EXPECT_EQ(Events("l-1", "UpdateAccepted").size(), 1u);
  EXPECT_EQ(Events("l-1", "OperationCommitted").size(), 1u);
  const auto accepted = Events("l-1", "UpdateAccepted");
  EXPECT_EQ(accepted[0].at("sentBy"), "operator") << json::serialize(accepted[0]);

  const CliRun after = Cli({"query", "l-1", "total"});
  EXPECT_EQ(after.out, "{\"total\":5}\n") << after.Describe();
  const CliRun unknown = Cli({"query", "l-1", "totl"});
  EXPECT_NE(unknown.code(), 0);
  EXPECT_NE(unknown.err.find("no query handler named 'totl'"), std::string::npos)
      << unknown.Describe();
  const CliRun ghost = Cli({"query", "ghost", "total"});
  EXPECT_NE(ghost.code(), 0);
  EXPECT_NE(ghost.err.find("ghost"), std::string::npos) << ghost.Describe();

  ASSERT_EQ(Cli({"signal", "l-1", "stop"}).code(), 0);
  ASSERT_TRUE(Eventually([&] {
    const CliRun shown = Cli({"show", "l-1", "--json"});
    return shown.code() == 0 && json::parse(shown.out).at("status") == "completed";
  }));
  const CliRun finished = Cli({"query", "l-1", "total"});
  EXPECT_NE(finished.code(), 0);
  EXPECT_NE(finished.err.find("completed"), std::string::npos) << finished.Describe();
}

TEST_F(CliUpdateTest, NoWorkerMeansAClearErrorAfterTheQueryTimeout) {
  StartLedger("l-3");
  ASSERT_TRUE(server_->StopWorker("worker"));
  const CliRun orphan = Cli({"query", "l-3", "total"});
  EXPECT_NE(orphan.code(), 0);
  EXPECT_NE(orphan.err.find("no connected worker hosts workflow type 'ledger'"),
            std::string::npos)
      << orphan.Describe();
  EXPECT_NE(orphan.err.find("within 1500 ms"), std::string::npos) << orphan.Describe();
}

// The handler waits for "release" when the server is SIGKILLed: UpdateAccepted is durable,
// UpdateCompleted is not. After the restart the handler resumes by replay; asking again with the
// same id gets the one answer, and the charge happened once.
TEST_F(CliUpdateTest, AnUpdateCutOffByAServerKillFinishesAfterTheRestart) {
  StartLedger("l-2");
  auto waiting = server_->StartCli(
      {"update", "l-2", "add", R"({"n": 7, "hold": true})", "--update-id", "k-1"});
  ASSERT_TRUE(waiting) << waiting.error().ToString();
  ASSERT_TRUE(Eventually([&] { return Events("l-2", "UpdateAccepted").size() == 1; }));
  ASSERT_TRUE(server_->KillServer());
  ASSERT_TRUE(server_->RestartServer());
  ASSERT_TRUE(Eventually([&] { return Cli({"signal", "l-2", "release"}).code() == 0; }));
  const CliRun answer =
      Cli({"update", "l-2", "add", R"({"n": 7, "hold": true})", "--update-id", "k-1", "--json"});
  ASSERT_EQ(answer.code(), 0) << answer.Describe();
  EXPECT_EQ(json::parse(answer.out).at("result").at("total").as_int64(), 7);
  EXPECT_EQ(Events("l-2", "UpdateAccepted").size(), 1u);
  EXPECT_EQ(Events("l-2", "UpdateCompleted").size(), 1u);
  EXPECT_EQ(Events("l-2", "OperationCommitted").size(), 1u);
  const CliRun total = Cli({"query", "l-2", "total"});
  EXPECT_EQ(total.out, "{\"total\":7}\n") << total.Describe();
}

}  // namespace
}  // namespace reckon::testing
