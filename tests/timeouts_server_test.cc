// Per-tool timeouts and tool heartbeats through the real binaries: `reckon server` on
// 127.0.0.1, reckon-timeouts-worker processes (tests/workers/timeouts_worker_main.cc, whose
// providers are files the test reads as ground truth) and the CLI.
//
//   - a tool that commits, then hangs without heartbeating: its heartbeat timeout makes the
//     outcome unknown (never a retry of the non_repeatable_write), the lookup after the hard
//     deadline finds the effect, and the provider holds exactly one;
//   - heartbeat details reach the next attempt, including after the server is SIGKILLed and
//     restarted while that attempt runs (the details come from the journal);
//   - a schedule-to-start timeout with no worker hosting the tool: the attempt is journaled as
//     not started (AttemptFailedRetryable, never OutcomeUnknown), and retried once a worker
//     connects: one effect;
//   - a run timeout (`reckon start --run-timeout`): the run fails with run_timeout, also when
//     the server was SIGKILLed and restarted before the deadline.
//
// No timed assertions: every wait is for a condition, with a generous bound.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/reckon_server.h"

namespace reckon::testing {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

class TimeoutsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Workers heartbeat every 100 ms, well inside the tools' 400 ms heartbeat timeouts.
    auto started = ReckonServer::Start(RECKON_CLI_PATH, {"--heartbeat-ms", "100"});
    ASSERT_TRUE(started) << started.error().ToString();
    server_ = std::move(started).value();
    dir_ = server_->dir().File("providers");
    std::filesystem::create_directories(dir_);
  }

  void StartWorker(const std::string& name, std::vector<std::string> args = {}) {
    args.insert(args.begin(), {"--dir", dir_, "--id", name});
    auto started = server_->StartWorker(RECKON_TIMEOUTS_WORKER, name, std::move(args));
    ASSERT_TRUE(started) << started.error().ToString();
  }

  void Start(const std::string& id, const std::string& tool) {
    const json::value input = json::object{
        {"tool", tool}, {"input", json::object{{"account", "acct-1"}, {"amount_cents", 100}}}};
    const CliRun run = server_->StartWorkflow(id, "call_once", json::serialize(input));
    ASSERT_EQ(run.code(), 0) << run.Describe();
  }

  json::value Show(const std::string& id) {
    const CliRun show = server_->Cli({"show", id, "--json"});
    if (show.code() != 0) return nullptr;
    return json::parse(show.out);
  }

  bool Finished(const std::string& id) {
    const json::value shown = Show(id);
    return shown.is_object() && shown.at("status") != "running";
  }

  // The events of `type` in the run's history (their inner objects).
  std::vector<json::object> Events(const std::string& id, const std::string& type) {
    const CliRun run = server_->Cli({"history", id, "--json"});
    std::vector<json::object> out;
    if (run.code() != 0) return out;
    const json::value history = json::parse(run.out);
    for (const json::value& event : history.as_array()) {
      if (event.at("type") == type.c_str()) out.push_back(event.at("event").as_object());
    }
    return out;
  }

  std::string Logs(const std::string& id = "") {
    std::string logs;
    if (!id.empty()) logs += "--- history\n" + server_->Cli({"history", id, "--json"}).out + "\n";
    for (const char* name : {"server.log", "w1.log", "w2.log", "w3.log"}) {
      std::ifstream in(server_->dir().File(name));
      std::stringstream text;
      text << in.rdbuf();
      logs += std::string("--- ") + name + "\n" + text.str();
    }
    return logs;
  }

  std::unique_ptr<ReckonServer> server_;
  std::string dir_;
};

TEST_F(TimeoutsServerTest, AHungToolIsLostByItsHeartbeatTimeoutAndReconciledToOneEffect) {
  StartWorker("w1");
  Start("wf-hang", "hang_write");
  ASSERT_TRUE(Eventually([&] { return Finished("wf-hang"); }, 60s)) << Logs();
  const json::value shown = Show("wf-hang");
  EXPECT_EQ(shown.at("status"), "completed") << json::serialize(shown) << Logs();

  const std::vector<json::object> unknown = Events("wf-hang", "OutcomeUnknown");
  ASSERT_EQ(unknown.size(), 1u) << Logs();
  EXPECT_EQ(unknown[0].at("reason"), "heartbeat_timeout");
  EXPECT_NE(json::serialize(unknown[0]).find("committed"), std::string::npos)
      << "the heartbeat's details are journaled with the event: " << json::serialize(unknown[0])
      << Logs("wf-hang");
  // Never a second attempt of the non_repeatable_write: the lookup found the effect.
  EXPECT_EQ(Events("wf-hang", "AttemptStarted").size(), 1u);
  const std::vector<json::object> committed = Events("wf-hang", "OperationCommitted");
  ASSERT_EQ(committed.size(), 1u);
  EXPECT_EQ(committed[0].at("source"), "reconciliation");
  EXPECT_EQ(Lines(dir_ + "/hang_write.ledger").size(), 1u) << "exactly one effect";
}

TEST_F(TimeoutsServerTest, HeartbeatDetailsReachTheNextAttemptAlsoAfterAServerCrash) {
  StartWorker("w1");
  // Attempt 2 holds (heartbeating) until it is stopped, so the server dies under it.
  std::ofstream(dir_ + "/hold-2") << "hold";
  Start("wf-resume", "resume_read");
  const std::string log = dir_ + "/resume_read.log";
  const std::string resumed = R"(attempt=2 details={"page":7})";
  ASSERT_TRUE(Eventually([&] {
    for (const std::string& line : Lines(log)) {
      if (line == resumed) return true;
    }
    return false;
  }, 60s)) << Logs();

  // The details are journaled with attempt 1's unknown outcome (its heartbeat timeout).
  const std::vector<json::object> unknown = Events("wf-resume", "OutcomeUnknown");
  ASSERT_EQ(unknown.size(), 1u) << Logs();
  EXPECT_EQ(unknown[0].at("reason"), "heartbeat_timeout");
  EXPECT_EQ(unknown[0].at("heartbeatDetailsJson"), R"({"page":7})");

  ASSERT_TRUE(server_->KillServer());
  ASSERT_TRUE(server_->RestartServer());
  // Recovery: attempt 2 was in flight (engine_restart, a read: retried); attempt 3 gets the
  // details from the journal and completes.
  ASSERT_TRUE(Eventually([&] { return Finished("wf-resume"); }, 60s)) << Logs();
  const json::value shown = Show("wf-resume");
  ASSERT_EQ(shown.at("status"), "completed") << json::serialize(shown) << Logs();
  const std::string result = json::serialize(shown);
  EXPECT_NE(result.find("resumed_from"), std::string::npos) << result;
  const std::vector<std::string> lines = Lines(log);
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines.front(), "attempt=1 details=null");
  EXPECT_EQ(lines.back(), R"(attempt=3 details={"page":7})") << Logs();
}

TEST_F(TimeoutsServerTest, AnAttemptNoWorkerTookIsJournaledAsNotStartedAndRetried) {
  // A tool worker registers the tool's contract, then goes away.
  StartWorker("w2", {"--no-workflows"});
  ASSERT_TRUE(Eventually([&] {
    const CliRun contracts = server_->Cli({"contracts"});
    return contracts.code() == 0 && contracts.out.find("queued_write") != std::string::npos;
  })) << Logs();
  ASSERT_TRUE(server_->StopWorker("w2"));
  StartWorker("w1", {"--no-tools"});  // hosts the workflow, not the tool
  Start("wf-queued", "queued_write");
  ASSERT_TRUE(Eventually([&] {
    return !Events("wf-queued", "AttemptFailedRetryable").empty();
  }, 60s)) << Logs("wf-queued");
  const std::vector<json::object> withdrawn = Events("wf-queued", "AttemptFailedRetryable");
  EXPECT_EQ(withdrawn[0].at("code"), "schedule_to_start_timeout");
  EXPECT_TRUE(Lines(dir_ + "/queued_write.ledger").empty());

  StartWorker("w3", {"--no-workflows"});
  ASSERT_TRUE(Eventually([&] { return Finished("wf-queued"); }, 60s)) << Logs("wf-queued");
  const json::value shown = Show("wf-queued");
  EXPECT_EQ(shown.at("status"), "completed") << json::serialize(shown) << Logs();
  // Known not to have started: never an unknown outcome, never a lookup.
  EXPECT_TRUE(Events("wf-queued", "OutcomeUnknown").empty());
  EXPECT_TRUE(Events("wf-queued", "ReconciliationStarted").empty());
  for (const json::object& failed : Events("wf-queued", "AttemptFailedRetryable")) {
    EXPECT_EQ(failed.at("code"), "schedule_to_start_timeout");
  }
  EXPECT_EQ(Lines(dir_ + "/queued_write.ledger").size(), 1u) << "exactly one effect";
}

TEST_F(TimeoutsServerTest, ARunTimeoutFailsTheRunAlsoAfterAServerRestart) {
  StartWorker("w1");
  const json::value input = json::object{
      {"signal", "go"},
      {"tool", "queued_write"},
      {"input", json::object{{"account", "acct-1"}, {"amount_cents", 100}}}};
  CliRun started;
  ASSERT_TRUE(Eventually([&] {  // the worker may still be registering
    started = server_->Cli({"start", "wf-deadline", "--type", "signal_then_call", "--input",
                            json::serialize(input), "--run-timeout", "2s"});
    return started.code() == 0;
  })) << started.Describe();
  const std::vector<json::object> starts = Events("wf-deadline", "WorkflowStarted");
  ASSERT_EQ(starts.size(), 1u);
  ASSERT_TRUE(starts[0].contains("runTimeoutMs")) << json::serialize(starts[0]);
  EXPECT_NE(json::serialize(starts[0].at("runTimeoutMs")).find("2000"), std::string::npos);
  // The server dies before the deadline: the restarted one arms it again from the journal.
  ASSERT_TRUE(server_->KillServer());
  ASSERT_TRUE(server_->RestartServer());
  ASSERT_TRUE(Eventually([&] { return Finished("wf-deadline"); }, 60s)) << Logs();
  EXPECT_EQ(Show("wf-deadline").at("status"), "failed") << Logs();
  const std::vector<json::object> failed = Events("wf-deadline", "WorkflowFailed");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].at("code"), "run_timeout");
  EXPECT_TRUE(Lines(dir_ + "/queued_write.ledger").empty()) << "the call never ran";
}

}  // namespace
}  // namespace reckon::testing
