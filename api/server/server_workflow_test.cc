// The real `reckon server` with a real worker (reckon-test-worker), over TCP: cancel on the
// wire, the plan hash the server journals (WorkflowStarted.definitionHash, for `reckon plan
// run` and for a bare startWorkflow of type plan, none for a plain start), and the starts it
// refuses: an invalid plan (the message names what is wrong, nothing is journaled), a hash that
// is not the plan's, and another plan under a used id (the original run untouched), while the
// same plan under the same id is an idempotent start.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <fstream>

#include "reckon/protocol/client.h"
#include "reckon/protocol/testing/call_once.h"
#include "reckon/protocol/credentials.h"
#include "reckon/plan/plan.h"
#include "reckon/storage/sqlite/sqlite_journal.h"
#include "tests/support/reckon_server.h"

namespace reckon::api {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using testing::CliRun;
using testing::Eventually;
using testing::ReckonServer;

// Two charges, b after a.
json::value TwoCharges(const std::string& plan_id, std::int64_t amount) {
  return json::parse(R"({"plan_id": ")" + plan_id + R"(", "steps": [
    {"id": "a", "tool": "charge", "input": {"account": "acct-a", "amount_cents": )" +
                     std::to_string(amount) + R"(}},
    {"id": "b", "tool": "charge", "depends_on": ["a"],
     "input": {"account": "acct-b", "amount_cents": 200}}]})");
}

std::string HashOf(const json::value& plan_json) {
  auto plan = ParsePlanJson(plan_json);
  EXPECT_TRUE(plan) << plan.error().ToString();
  return plan ? PlanHash(plan.value()) : std::string();
}

class ServerWorkflowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = ReckonServer::Start(RECKON_CLI_PATH);
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(server).value();
    auto worker = server_->StartWorker(RECKON_TEST_WORKER, "worker");
    ASSERT_TRUE(worker) << worker.error().ToString();
    // Plans are validated against the contracts the worker declares when it registers: its
    // five tools (tests/workers/test_worker_main.cc).
    ASSERT_TRUE(Eventually([&] {
      auto message = Request();
      message->getRoot<wire::Request>().initMethod().setListContracts();
      auto listed = Call(std::move(message));
      return listed && listed.value().get().getResult().getContracts().size() == 5;
    })) << "the worker did not register";
  }

  // One request on a fresh connection, with the token of `role` (the operator starts, signals,
  // cancels and reads).
  Result<Reply> Call(std::unique_ptr<capnp::MallocMessageBuilder> request,
                     const std::string& role = "operator") {
    return testing::CallOnceWithTokenFile(server_->address(), server_->TokenFile(role),
                                          std::move(request));
  }

  static std::unique_ptr<capnp::MallocMessageBuilder> Request() {
    auto message = std::make_unique<capnp::MallocMessageBuilder>();
    message->initRoot<wire::Request>();
    return message;
  }

  // startWorkflow, again while the worker is still registering (no connected worker hosts the
  // type yet).
  Result<Reply> Start(const std::string& id, const std::string& type, const json::value& input,
                      const std::string& definition_hash = "") {
    std::optional<Result<Reply>> reply;
    Eventually([&] {
      auto message = Request();
      auto start = message->getRoot<wire::Request>().initMethod().initStartWorkflow();
      start.setWorkflowId(id);
      start.setWorkflowType(type);
      start.setInputJson(json::serialize(input));
      start.setDefinitionHash(definition_hash);
      reply.emplace(Call(std::move(message)));
      return reply->has_value() ||
             reply->error().message().find("no connected worker") == std::string::npos;
    });
    return std::move(*reply);
  }

  Result<Reply> Describe(const std::string& id) {
    auto message = Request();
    message->getRoot<wire::Request>().initMethod().initDescribeWorkflow().setWorkflowId(id);
    return Call(std::move(message));
  }

  std::string Status(const std::string& id) {
    auto described = Describe(id);
    if (!described) return described.error().ToString();
    return described.value().get().getResult().getWorkflow().getSummary().getStatus().cStr();
  }

  std::size_t HistorySize(const std::string& id) {
    auto message = Request();
    message->getRoot<wire::Request>().initMethod().initGetHistory().setWorkflowId(id);
    auto history = Call(std::move(message));
    EXPECT_TRUE(history) << history.error().ToString();
    return history ? history.value().get().getResult().getHistory().size() : 0;
  }

  std::size_t Listed() {
    auto message = Request();
    message->getRoot<wire::Request>().initMethod().initListWorkflows();
    auto listed = Call(std::move(message));
    EXPECT_TRUE(listed) << listed.error().ToString();
    return listed ? listed.value().get().getResult().getWorkflows().size() : 0;
  }

  std::string WritePlan(const std::string& name, const json::value& plan) {
    const std::string path = server_->dir().File(name);
    std::ofstream(path) << json::serialize(plan);
    return path;
  }

  // Stops the processes and returns the WorkflowStarted of every run, by workflow id.
  std::map<std::string, storage::WorkflowStarted> StopAndReadStarts() {
    auto stopped = server_->Stop();
    EXPECT_TRUE(stopped) << stopped.error().ToString();
    std::map<std::string, storage::WorkflowStarted> starts;
    auto journal = storage::OpenSqliteJournal(server_->journal_path());
    EXPECT_TRUE(journal) << journal.error().ToString();
    if (!journal) return starts;
    auto runs = journal.value()->ListRuns();
    EXPECT_TRUE(runs);
    for (const storage::RunRow& run : runs.value()) {
      auto events = journal.value()->ReadEvents(run.ref, 1);
      EXPECT_TRUE(events && !events.value().empty());
      const auto* started = std::get_if<storage::WorkflowStarted>(&events.value().front().body);
      EXPECT_NE(started, nullptr) << run.ref.workflow_id;
      if (started != nullptr) starts[run.ref.workflow_id] = *started;
    }
    return starts;
  }

  std::unique_ptr<ReckonServer> server_;
};

json::value CallOnce(const std::string& tool) {
  return json::object{{"tool", tool},
                      {"input", json::object{{"account", "acct-1"}, {"amount_cents", 100}}}};
}

TEST_F(ServerWorkflowTest, CancelOverTheWireThenDescribeSaysCancelled) {
  json::value input = CallOnce("charge");
  input.as_object()["signal"] = "go";
  auto started = Start("w-1", "signal_then_call", input);
  ASSERT_TRUE(started) << started.error().ToString();
  EXPECT_EQ(Status("w-1"), "running");

  auto message = Request();
  auto cancel = message->getRoot<wire::Request>().initMethod().initCancelWorkflow();
  cancel.setWorkflowId("w-1");
  cancel.setReason("not needed");
  auto cancelled = Call(std::move(message));
  ASSERT_TRUE(cancelled) << cancelled.error().ToString();
  EXPECT_TRUE(cancelled.value().get().getResult().isOk());
  EXPECT_EQ(Status("w-1"), "cancelled");

  auto ghost = Request();
  ghost->getRoot<wire::Request>().initMethod().initCancelWorkflow().setWorkflowId("ghost");
  auto refused = Call(std::move(ghost));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::kNotFound);
  EXPECT_NE(refused.error().message().find("'ghost'"), std::string::npos)
      << refused.error().message();
}

// The remote worker's code is told of the cancel at its signal wait and undoes its charge with
// a durable call of its own (step "undo"), journaled after the request, then ends cancelled.
TEST_F(ServerWorkflowTest, CancelReachesRemoteCodeWhichUndoesItsWorkBeforeTheRunEnds) {
  json::value input = CallOnce("charge");
  input.as_object()["signal"] = "go";
  auto started = Start("u-1", "undo_on_cancel", input);
  ASSERT_TRUE(started) << started.error().ToString();
  ASSERT_TRUE(Eventually([&] {
    auto d = Describe("u-1");
    return d && d.value().get().getResult().getWorkflow().getSummary().getCommittedOperations() == 1;
  }));
  auto message = Request();
  auto cancel = message->getRoot<wire::Request>().initMethod().initCancelWorkflow();
  cancel.setWorkflowId("u-1");
  cancel.setReason("order withdrawn");
  auto cancelled = Call(std::move(message));
  ASSERT_TRUE(cancelled) << cancelled.error().ToString();
  ASSERT_TRUE(Eventually([&] { return Status("u-1") == "cancelled"; })) << Status("u-1");
  auto described = Describe("u-1");
  ASSERT_TRUE(described);
  std::vector<std::string> steps;
  for (auto op : described.value().get().getResult().getWorkflow().getOperations()) {
    EXPECT_EQ(std::string(op.getState().cStr()), "committed") << op.getStepId().cStr();
    steps.emplace_back(op.getStepId().cStr());
  }
  EXPECT_EQ(steps, (std::vector<std::string>{"charge#1", "undo"}));
  EXPECT_FALSE(described.value().get().getResult().getWorkflow().getCancelRequested());
  // In the journal the undo comes after the request.
  const CliRun history = server_->Cli({"history", "u-1"});
  ASSERT_EQ(history.code(), 0) << history.Describe();
  const std::size_t request = history.out.find("WorkflowCancelRequested");
  ASSERT_NE(request, std::string::npos) << history.out;
  EXPECT_NE(history.out.find("undo", request), std::string::npos) << history.out;
}

// A remote worker's code starts a child over the wire (the startChild command); the server
// starts it in the parent's transaction, drives it on a worker, and hands its result back.
TEST_F(ServerWorkflowTest, AChildWorkflowStartedByRemoteCodeRunsAndReturnsItsResult) {
  json::object input{{"type", "call_once"}, {"id", "p-1-child"}, {"input", CallOnce("charge")}};
  auto started = Start("p-1", "start_child", input);
  ASSERT_TRUE(started) << started.error().ToString();
  ASSERT_TRUE(Eventually([&] { return Status("p-1") == "completed"; })) << Status("p-1");
  EXPECT_EQ(Status("p-1-child"), "completed");
  auto described = Describe("p-1");
  ASSERT_TRUE(described);
  const json::value result = json::parse(
      described.value().get().getResult().getWorkflow().getResultJson().cStr());
  EXPECT_TRUE(result.at("child").as_object().contains("ref")) << json::serialize(result);
  // The detail links them both ways.
  auto parent = described.value().get().getResult().getWorkflow();
  ASSERT_EQ(parent.getChildren().size(), 1u);
  EXPECT_EQ(std::string(parent.getChildren()[0].getWorkflowId().cStr()), "p-1-child");
  EXPECT_EQ(std::string(parent.getChildren()[0].getStatus().cStr()), "completed");
  auto child = Describe("p-1-child");
  ASSERT_TRUE(child);
  auto child_detail = child.value().get().getResult().getWorkflow();
  EXPECT_EQ(std::string(child_detail.getParent().getWorkflowId().cStr()), "p-1");
  EXPECT_EQ(std::string(child_detail.getParentClosePolicy().cStr()), "cancel");
}

TEST_F(ServerWorkflowTest, ThePlanHashIsJournaledForPlansAndNoneForAPlainStart) {
  // `reckon plan run` sends the hash it computed; the server checks it and journals it.
  const json::value by_cli = TwoCharges("plan-cli", 100);
  const CliRun ran = server_->Cli({"plan", "run", WritePlan("plan-cli.json", by_cli)});
  EXPECT_EQ(ran.code(), 0) << ran.Describe();
  EXPECT_NE(ran.out.find("plan plan-cli: completed"), std::string::npos) << ran.out;
  // A bare startWorkflow of type plan sends none: the server computes it.
  const json::value bare = TwoCharges("plan-wire", 300);
  auto started = Start("plan-wire", "plan", bare);
  ASSERT_TRUE(started) << started.error().ToString();
  auto plain = Start("plain-1", "call_once", CallOnce("charge"));
  ASSERT_TRUE(plain) << plain.error().ToString();

  auto starts = StopAndReadStarts();
  ASSERT_EQ(starts.size(), 3u);
  EXPECT_EQ(starts["plan-cli"].workflow_type, "plan");
  EXPECT_EQ(starts["plan-cli"].definition_hash, HashOf(by_cli));
  EXPECT_EQ(starts["plan-wire"].definition_hash, HashOf(bare));
  EXPECT_EQ(starts["plan-cli"].definition_hash.size(), 64u);
  EXPECT_NE(starts["plan-cli"].definition_hash, starts["plan-wire"].definition_hash);
  EXPECT_EQ(starts["plain-1"].workflow_type, "call_once");
  EXPECT_EQ(starts["plain-1"].definition_hash, "");
}

TEST_F(ServerWorkflowTest, AHashThatIsNotThePlansIsRefused) {
  const json::value plan = TwoCharges("plan-h", 100);
  const std::string wrong(64, '0');
  auto refused = Start("plan-h", "plan", plan, wrong);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::kInvalidArgument);
  EXPECT_EQ(refused.error().message(),
            "definitionHash " + wrong + " does not match the plan, which hashes to " + HashOf(plan));
  auto described = Describe("plan-h");
  ASSERT_FALSE(described) << "nothing was journaled";
  EXPECT_EQ(described.error().code(), Errc::kNotFound);
}

TEST_F(ServerWorkflowTest, AnInvalidPlanIsRefusedNamingTheProblemsAndNothingIsJournaled) {
  const json::value invalid = json::parse(R"({"plan_id": "bad-1", "steps": [
    {"id": "x", "tool": "no_such_tool", "input": {}},
    {"id": "y", "tool": "charge", "input": {"account": "acct-y", "amount_cents": 5},
     "overrides": {"max_attempts": 10}}]})");
  auto refused = Start("bad-1", "plan", invalid);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::kInvalidArgument);
  const std::string& message = refused.error().message();
  EXPECT_NE(message.find("step 'x': tool: no contract for tool 'no_such_tool'"), std::string::npos)
      << message;
  EXPECT_NE(message.find("step 'y': overrides.max_attempts: 10 would loosen"), std::string::npos)
      << message;

  // From the CLI, `reckon start` does not validate: the server's refusal is what it prints.
  const CliRun started = server_->Cli(
      {"start", "bad-1", "--type", "plan", "--input-file", WritePlan("bad.json", invalid)});
  EXPECT_EQ(started.code(), 2) << started.Describe();
  EXPECT_NE(started.err.find("no contract for tool 'no_such_tool'"), std::string::npos)
      << started.err;
  // Not a plan at all, and a plan under another id than its plan_id.
  auto garbage = Start("bad-2", "plan", json::parse(R"({"plan_id": 3, "steps": {}})"));
  ASSERT_FALSE(garbage);
  EXPECT_EQ(garbage.error().code(), Errc::kInvalidArgument);
  auto elsewhere = Start("bad-3", "plan", TwoCharges("plan-x", 100));
  ASSERT_FALSE(elsewhere);
  EXPECT_NE(elsewhere.error().message().find("a plan runs under its plan_id ('plan-x')"),
            std::string::npos) << elsewhere.error().message();

  auto described = Describe("bad-1");
  ASSERT_FALSE(described) << "nothing was journaled";
  EXPECT_EQ(described.error().code(), Errc::kNotFound);
  EXPECT_EQ(Listed(), 0u);
  EXPECT_TRUE(StopAndReadStarts().empty()) << "nothing was journaled";
}

TEST_F(ServerWorkflowTest, AChangedPlanUnderAUsedIdIsRefusedAndTheSamePlanIsIdempotent) {
  const json::value original = TwoCharges("plan-1", 100);
  auto first = Start("plan-1", "plan", original);
  ASSERT_TRUE(first) << first.error().ToString();
  const std::string run_id = first.value().get().getResult().getStarted().getRunId().cStr();
  ASSERT_TRUE(Eventually([&] { return Status("plan-1") == "completed"; })) << Status("plan-1");
  const std::size_t events = HistorySize("plan-1");

  const json::value changed = TwoCharges("plan-1", 101);
  auto refused = Start("plan-1", "plan", changed);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::kAlreadyExists);
  EXPECT_NE(refused.error().message().find("workflow 'plan-1' was already started"),
            std::string::npos) << refused.error().message();
  const CliRun cli = server_->Cli({"plan", "run", WritePlan("changed.json", changed)});
  EXPECT_EQ(cli.code(), 2) << cli.Describe();
  EXPECT_NE(cli.err.find("plan id 'plan-1' was already run with a different plan (this one "
                         "hashes to " + HashOf(changed) + ")"),
            std::string::npos) << cli.err;

  // The same plan again: the same run, nothing new journaled; also when `reckon plan run`
  // sends it in its normal form (defaults written out), not as this test spelled it.
  auto again = Start("plan-1", "plan", original);
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(std::string(again.value().get().getResult().getStarted().getRunId().cStr()), run_id);
  const CliRun rerun = server_->Cli({"plan", "run", WritePlan("original.json", original)});
  EXPECT_EQ(rerun.code(), 0) << rerun.Describe();
  EXPECT_EQ(Status("plan-1"), "completed");
  EXPECT_EQ(HistorySize("plan-1"), events) << "the original run is untouched";
  auto starts = StopAndReadStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts["plan-1"].definition_hash, HashOf(original));
}

}  // namespace
}  // namespace reckon::api
