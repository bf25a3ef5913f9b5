// Worker build ids through the real binaries (docs/VERSIONING.md, "Worker build ids"): a real
// `reckon server` and reckon-test-worker processes declaring builds, on 127.0.0.1. Runs started
// on v1 keep going to v1 while a v2 worker is connected too; with v1 gone a v1 run waits (not
// failed, nothing journaled) and `reckon show` / `reckon workers` say for which build; a v2
// worker declaring v1 compatible picks it up. `reckon workers` lists the workers, their builds,
// queues and leases.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/reckon_server.h"

namespace reckon::testing {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

std::string SignalInput(const std::string& signal) {
  return json::serialize(json::object{
      {"signal", signal},
      {"tool", "charge"},
      {"input", json::object{{"account", "acct-7"}, {"amount_cents", 300}}}});
}

class CliWorkersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = ReckonServer::Start(RECKON_CLI_PATH);
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(server).value();
  }

  void StartWorker(const std::string& id, std::vector<std::string> build_args) {
    build_args.insert(build_args.begin(), {"--id", id});
    auto worker = server_->StartWorker(RECKON_TEST_WORKER, id, std::move(build_args));
    ASSERT_TRUE(worker) << worker.error().ToString();
  }

  json::value Json(std::vector<std::string> args) {
    args.push_back("--json");
    const CliRun run = server_->Cli(std::move(args));
    if (run.code() != 0) return nullptr;
    return json::parse(run.out);
  }

  json::object Summary(const std::string& id) {
    const json::value shown = Json({"show", id});
    return shown.is_object() ? shown.as_object() : json::object{};
  }

  bool WaitsOn(const std::string& id, const std::string& kind) {
    return Eventually([&] {
      const json::object s = Summary(id);
      return s.contains("waits_on") && s.at("waits_on") == kind.c_str();
    });
  }

  // The worker `id` in `reckon workers --json`; null while it is not connected.
  json::value Worker(const std::string& id) {
    const json::value listed = Json({"workers"});
    if (!listed.is_object()) return nullptr;
    for (const json::value& w : listed.at("workers").as_array()) {
      if (w.at("worker_id") == id.c_str()) return w;
    }
    return nullptr;
  }

  std::size_t HistoryLength(const std::string& id) {
    const json::value history = Json({"history", id});
    return history.is_array() ? history.as_array().size() : 0;
  }

  // The builds the run's WorkflowTaskStarted events record, in order, each with its worker.
  std::vector<std::string> BuildsJournaled(const std::string& id) {
    std::vector<std::string> builds;
    const json::value history = Json({"history", id});
    if (!history.is_array()) return {"no history"};
    for (const json::value& event : history.as_array()) {
      if (event.at("type") != "WorkflowTaskStarted") continue;
      const json::object& body = event.at("event").as_object();
      const json::value* build = body.if_contains("buildId");
      const json::value* worker = body.if_contains("worker");
      builds.push_back((build ? std::string(build->as_string()) : std::string()) + "@" +
                       (worker ? std::string(worker->as_string()) : std::string()));
    }
    return builds;
  }

  std::unique_ptr<ReckonServer> server_;
};

TEST_F(CliWorkersTest, RunsStayWithTheirBuildAndWaitForACompatibleWorker) {
  StartWorker("w-v1", {"--build-id", "v1"});
  for (const char* id : {"old-1", "old-2"}) {
    const CliRun started = server_->StartWorkflow(id, "signal_then_call", SignalInput("go"));
    ASSERT_EQ(started.code(), 0) << started.Describe();
    ASSERT_TRUE(WaitsOn(id, "signal")) << "v1 ran the first workflow task of " << id;
  }
  StartWorker("w-v2", {"--build-id", "v2"});
  ASSERT_TRUE(Eventually([&] { return !Worker("w-v2").is_null(); }));

  // Both connected: `reckon workers` lists them with builds, queues and leases.
  const json::value v1 = Worker("w-v1");
  ASSERT_TRUE(v1.is_object());
  EXPECT_EQ(v1.at("build_id"), "v1");
  EXPECT_TRUE(v1.at("compatible_builds").as_array().empty());
  const json::array& types = v1.at("workflow_types").as_array();
  EXPECT_NE(std::find(types.begin(), types.end(), json::value("signal_then_call")), types.end());
  const json::array& tools = v1.at("tools").as_array();
  EXPECT_NE(std::find(tools.begin(), tools.end(), json::value("charge")), tools.end());
  EXPECT_TRUE(v1.at("workflow_tasks").is_array());
  EXPECT_TRUE(v1.at("tool_tasks").is_array());
  EXPECT_GT(v1.at("connected_since_us").to_number<std::int64_t>(), 0);
  EXPECT_EQ(Worker("w-v2").at("build_id"), "v2");
  const CliRun table = server_->Cli({"workers"});
  ASSERT_EQ(table.code(), 0) << table.Describe();
  EXPECT_NE(table.out.find("w-v1"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("w-v2"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("2 worker(s) connected"), std::string::npos) << table.out;

  // A v1 run goes on on v1 with v2 beside it.
  const CliRun signalled = server_->Cli({"signal", "old-1", "go"});
  ASSERT_EQ(signalled.code(), 0) << signalled.Describe();
  ASSERT_TRUE(WaitsOn("old-1", "nothing"));
  EXPECT_EQ(Summary("old-1").at("status"), "completed");

  // v1 leaves: the other v1 run waits for a worker of its build, running and not failed.
  ASSERT_TRUE(server_->StopWorker("w-v1"));
  ASSERT_TRUE(Eventually([&] { return Worker("w-v1").is_null(); }));
  const std::size_t journaled = HistoryLength("old-2");
  auto signal = server_->StartCli({"signal", "old-2", "go"});  // answered once it is durable
  ASSERT_TRUE(signal) << signal.error().ToString();
  ASSERT_TRUE(WaitsOn("old-2", "worker"));
  EXPECT_EQ(Summary("old-2").at("wait_detail"), "v1");
  EXPECT_EQ(Summary("old-2").at("status"), "running");
  EXPECT_EQ(HistoryLength("old-2"), journaled) << "nothing journaled while it waits";
  const json::value listed = Json({"workers"});
  ASSERT_TRUE(listed.is_object());
  ASSERT_EQ(listed.at("waiting").as_array().size(), 1u);
  EXPECT_EQ(listed.at("waiting").as_array()[0].at("workflow_id"), "old-2");
  EXPECT_EQ(listed.at("waiting").as_array()[0].at("build_id"), "v1");
  const CliRun shown = server_->Cli({"show", "old-2"});
  EXPECT_NE(shown.out.find("a worker of build v1"), std::string::npos) << shown.out;

  // A new run goes to v2 meanwhile.
  const CliRun fresh = server_->StartWorkflow("new-1", "signal_then_call", SignalInput("go"));
  ASSERT_EQ(fresh.code(), 0) << fresh.Describe();
  ASSERT_TRUE(WaitsOn("new-1", "signal"));

  // A worker that declares v1 compatible picks the v1 run up.
  StartWorker("w-v2-reads-v1", {"--build-id", "v2", "--compatible-with", "v1"});
  ASSERT_TRUE(WaitsOn("old-2", "nothing"));
  EXPECT_EQ(Summary("old-2").at("status"), "completed");
  auto ended = signal.value().WaitFor(30s);
  ASSERT_TRUE(ended) << ended.error().ToString();
  EXPECT_TRUE(ended.value().Succeeded()) << ended.value().ToString();
  const json::value reader = Worker("w-v2-reads-v1");
  ASSERT_TRUE(reader.is_object());
  EXPECT_EQ(reader.at("compatible_builds"), json::array({"v1"}));
  EXPECT_TRUE(Json({"workers"}).at("waiting").as_array().empty());
  ASSERT_TRUE(server_->Stop());
}

// The build a run is pinned to is journaled (WorkflowTaskStarted, only when the build that
// ran the code changes), so a server restart keeps it: after a SIGKILL of the server, the v1
// run waits for a v1 (or compatible) worker while a v2 worker is connected.
TEST_F(CliWorkersTest, ARunKeepsItsBuildAcrossAServerRestart) {
  StartWorker("w-v1", {"--build-id", "v1"});
  const CliRun started = server_->StartWorkflow("kept-1", "ledger", "{}");
  ASSERT_EQ(started.code(), 0) << started.Describe();
  ASSERT_TRUE(WaitsOn("kept-1", "signal"));
  EXPECT_EQ(BuildsJournaled("kept-1"), std::vector<std::string>{"v1@w-v1"});
  // More activations on the same build journal nothing more.
  const CliRun added = server_->Cli({"update", "kept-1", "add", R"({"n": 2})"});
  ASSERT_EQ(added.code(), 0) << added.Describe();
  EXPECT_EQ(BuildsJournaled("kept-1"), std::vector<std::string>{"v1@w-v1"});

  ASSERT_TRUE(server_->StopWorker("w-v1"));
  ASSERT_TRUE(server_->KillServer());
  ASSERT_TRUE(server_->RestartServer());
  StartWorker("w-v2", {"--build-id", "v2"});
  ASSERT_TRUE(Eventually([&] { return !Worker("w-v2").is_null(); }));
  // The recovered run's replay waits for its build; v2 does not take it.
  ASSERT_TRUE(WaitsOn("kept-1", "worker")) << server_->Cli({"show", "kept-1"}).out;
  EXPECT_EQ(Summary("kept-1").at("wait_detail"), "v1");
  const json::value listed = Json({"workers"});
  ASSERT_TRUE(listed.is_object());
  ASSERT_EQ(listed.at("waiting").as_array().size(), 1u);
  EXPECT_EQ(listed.at("waiting").as_array()[0].at("build_id"), "v1");
  auto stop = server_->StartCli({"signal", "kept-1", "stop"});  // answered once durable
  ASSERT_TRUE(stop) << stop.error().ToString();
  EXPECT_EQ(Summary("kept-1").at("status"), "running");

  // A worker declaring v1 compatible takes it and finishes it; its build is journaled.
  StartWorker("w-v2-reads-v1", {"--build-id", "v2", "--compatible-with", "v1"});
  ASSERT_TRUE(WaitsOn("kept-1", "nothing"));
  EXPECT_EQ(Summary("kept-1").at("status"), "completed");
  EXPECT_EQ(BuildsJournaled("kept-1"),
            (std::vector<std::string>{"v1@w-v1", "v2@w-v2-reads-v1"}));
  auto ended = stop.value().WaitFor(30s);
  ASSERT_TRUE(ended) << ended.error().ToString();
  EXPECT_TRUE(ended.value().Succeeded()) << ended.value().ToString();
}

TEST_F(CliWorkersTest, ABadBuildIdIsRefusedAtRegistration) {
  StartWorker("w-bad", {"--build-id", "v 1"});
  ASSERT_TRUE(Eventually([&] {
    std::ifstream in(server_->dir().File("w-bad.log"));
    std::stringstream log;
    log << in.rdbuf();
    return log.str().find("buildId 'v 1'") != std::string::npos;
  })) << "the worker's log names the refused field";
  EXPECT_TRUE(Worker("w-bad").is_null());
}

}  // namespace
}  // namespace reckon::testing
