// The CLI's workflow commands against a real `reckon server` with a real worker
// (reckon-test-worker, tests/workers/test_worker_main.cc): cancel, deny, resolve, signal,
// trace and the filters of list, each checked by its exit code and output and by the durable
// effect it had, as `reckon show` / `history` report it afterwards.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include "tests/support/reckon_server.h"

namespace reckon::testing {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

std::string Input(const std::string& tool, std::int64_t amount) {
  return json::serialize(json::object{
      {"tool", tool}, {"input", json::object{{"account", "acct-7"}, {"amount_cents", amount}}}});
}

std::string SignalInput(const std::string& signal) {
  return json::serialize(json::object{
      {"signal", signal},
      {"tool", "charge"},
      {"input", json::object{{"account", "acct-7"}, {"amount_cents", 300}}}});
}

class CliServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = ReckonServer::Start(RECKON_CLI_PATH);
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(server).value();
    auto worker = server_->StartWorker(RECKON_TEST_WORKER, "worker");
    ASSERT_TRUE(worker) << worker.error().ToString();
  }

  CliRun Cli(std::vector<std::string> args) { return server_->Cli(std::move(args)); }

  void Start(const std::string& id, const std::string& type, const std::string& input) {
    const CliRun run = server_->StartWorkflow(id, type, input);
    ASSERT_EQ(run.code(), 0) << run.Describe();
  }

  // `reckon show ID --json`, parsed; null if the command failed.
  json::value Show(const std::string& id) {
    const CliRun run = Cli({"show", id, "--json"});
    if (run.code() != 0) return nullptr;
    return json::parse(run.out);
  }

  // The operation of `step` in `reckon show ID --json`; an empty object if there is none.
  json::object Operation(const std::string& id, const std::string& step) {
    const json::value shown = Show(id);
    if (!shown.is_object()) return {};
    for (const json::value& op : shown.at("operations").as_array()) {
      if (op.at("step_id") == step.c_str()) return op.as_object();
    }
    return {};
  }

  bool WaitForState(const std::string& id, const std::string& step, const std::string& state) {
    return Eventually([&] {
      const json::object op = Operation(id, step);
      return op.contains("state") && op.at("state") == state.c_str();
    });
  }

  bool WaitForStatus(const std::string& id, const std::string& status) {
    return Eventually([&] {
      const json::value shown = Show(id);
      return shown.is_object() && shown.at("status") == status.c_str();
    });
  }

  // The events of `reckon history ID --json` of type `type`, in journal order.
  std::vector<json::object> EventsOfType(const std::string& id, const std::string& type) {
    const CliRun run = Cli({"history", id, "--json"});
    EXPECT_EQ(run.code(), 0) << run.Describe();
    std::vector<json::object> out;
    if (run.code() != 0) return out;
    const json::value history = json::parse(run.out);
    for (const json::value& event : history.as_array()) {
      if (event.at("type") == type.c_str()) out.push_back(event.at("event").as_object());
    }
    return out;
  }

  // The workflow ids `reckon list ARGS --json` prints.
  std::set<std::string> Listed(std::vector<std::string> args) {
    args.insert(args.begin(), "list");
    args.push_back("--json");
    const CliRun run = Cli(args);
    EXPECT_EQ(run.code(), 0) << run.Describe();
    std::set<std::string> ids;
    if (run.code() != 0) return ids;
    const json::value listed = json::parse(run.out);
    for (const json::value& item : listed.as_array()) {
      ids.insert(std::string(item.at("workflow_id").as_string()));
    }
    return ids;
  }

  std::unique_ptr<ReckonServer> server_;
};

// The first line of `text` that starts with `label`; empty if there is none.
std::string LineOf(const std::string& text, const std::string& label) {
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    if (text.compare(begin, label.size(), label) == 0) return text.substr(begin, end - begin);
    begin = end + 1;
  }
  return "";
}

// --- cancel -----------------------------------------------------------------------------------

TEST_F(CliServerTest, CancelEndsAWaitingRunAndShowSaysCancelled) {
  Start("c-1", "signal_then_call", SignalInput("go"));
  const CliRun cancelled = Cli({"cancel", "c-1", "--reason", "no longer needed"});
  EXPECT_EQ(cancelled.code(), 0) << cancelled.Describe();
  EXPECT_EQ(cancelled.out, "cancelled c-1\n");

  const CliRun shown = Cli({"show", "c-1"});
  ASSERT_EQ(shown.code(), 0) << shown.Describe();
  EXPECT_EQ(LineOf(shown.out, "status"), "status    cancelled") << shown.out;
  const auto requested = EventsOfType("c-1", "WorkflowCancelRequested");
  ASSERT_EQ(requested.size(), 1u);
  EXPECT_EQ(requested[0].at("reason"), "no longer needed");
  EXPECT_EQ(EventsOfType("c-1", "WorkflowCancelled").size(), 1u);

  // A signal can no longer wake it, and nothing it would have done happens.
  const CliRun signalled = Cli({"signal", "c-1", "go"});
  EXPECT_EQ(signalled.code(), 1) << signalled.Describe();
  EXPECT_NE(signalled.err.find("cancelled; it takes no more signals"), std::string::npos)
      << signalled.err;
  EXPECT_TRUE(Operation("c-1", "charge#1").empty());

  const CliRun again = Cli({"cancel", "c-1"});
  EXPECT_EQ(again.code(), 1) << again.Describe();
  EXPECT_NE(again.err.find("already cancelled"), std::string::npos) << again.err;
  const CliRun ghost = Cli({"cancel", "ghost"});
  EXPECT_EQ(ghost.code(), 2) << ghost.Describe();
  EXPECT_NE(ghost.err.find("reckon cancel: no active workflow 'ghost'"), std::string::npos)
      << ghost.err;
}

TEST_F(CliServerTest, CancelIsRefusedWhileAnOperationNeedsAPerson) {
  Start("c-2", "call_once", Input("unsure", 100));
  ASSERT_TRUE(WaitForState("c-2", "unsure#1", "needs_human")) << Show("c-2");
  const std::string op(Operation("c-2", "unsure#1").at("operation_id").as_string());
  const CliRun refused = Cli({"cancel", "c-2", "--reason", "too slow"});
  EXPECT_EQ(refused.code(), 1) << refused.Describe();
  EXPECT_EQ(refused.out, "");
  EXPECT_NE(refused.err.find("operation " + op + " (step 'unsure#1', tool 'unsure') is needs_human "
                             "and may have acted"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(Show("c-2").at("status"), "running");
  EXPECT_TRUE(EventsOfType("c-2", "WorkflowCancelRequested").empty());
}

// --- deny, resolve ----------------------------------------------------------------------------

TEST_F(CliServerTest, DenyEndsTheOperationWithApprovalDenied) {
  Start("d-1", "call_once", Input("payout", 900));
  ASSERT_TRUE(WaitForState("d-1", "payout#1", "awaiting_approval")) << Show("d-1");
  const json::object waiting = Operation("d-1", "payout#1");
  const std::string op(waiting.at("operation_id").as_string());
  const CliRun denied =
      Cli({"deny", "d-1", "--operation", op, "--fingerprint",
           std::string(waiting.at("intent_hash").as_string()), "--reason", "not this customer"});
  EXPECT_EQ(denied.code(), 0) << denied.Describe();
  EXPECT_EQ(denied.out, "denied " + op + " of d-1\n");

  ASSERT_TRUE(WaitForStatus("d-1", "failed")) << Show("d-1");
  const json::object after = Operation("d-1", "payout#1");
  EXPECT_EQ(after.at("state"), "rejected");
  EXPECT_EQ(after.at("failure_code"), "approval_denied");
  EXPECT_EQ(after.at("attempt"), 0) << "a denied operation never runs";
  const auto events = EventsOfType("d-1", "ApprovalDenied");
  ASSERT_EQ(events.size(), 1u);
  // The principal of the token, never a name the caller typed.
  EXPECT_EQ(events[0].at("deniedBy"), "approver");
  EXPECT_EQ(events[0].at("reason"), "not this customer");
  const auto failed = EventsOfType("d-1", "WorkflowFailed");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].at("code"), "approval_denied");

  // Approving afterwards is refused: the decision is taken.
  const CliRun late = Cli({"approve", "d-1", "--operation", op, "--fingerprint",
                           std::string(waiting.at("intent_hash").as_string())});
  EXPECT_NE(late.code(), 0) << late.Describe();
}

// Separation of duties: a person who both operates and approves may not approve the run they
// started; another approver may. An approver scoped to other tools may not either.
TEST_F(CliServerTest, WhoStartedARunMayNotApproveItAndScopesNarrowApprovers) {
  const std::string pat = server_->dir().File("pat.token");
  const std::string narrow = server_->dir().File("narrow.token");
  ASSERT_EQ(Cli({"auth", "token", "create", "--name", "pat", "--role", "operator,approver",
                 "--out", pat}).code(), 0);
  ASSERT_EQ(Cli({"auth", "token", "create", "--name", "narrow", "--role", "approver", "--tools",
                 "charge", "--out", narrow}).code(), 0);
  CliRun started;
  ASSERT_TRUE(testing::Eventually([&] {
    started = Cli({"start", "sod-1", "--type", "call_once", "--input", Input("payout", 900),
                   "--token-file", pat});
    return started.code() == 0;
  })) << started.Describe();
  ASSERT_TRUE(WaitForState("sod-1", "payout#1", "awaiting_approval")) << Show("sod-1");
  const json::object waiting = Operation("sod-1", "payout#1");
  const std::string op(waiting.at("operation_id").as_string());
  const std::string hash(waiting.at("intent_hash").as_string());
  EXPECT_EQ(Show("sod-1").at("started_by"), "pat");

  const CliRun own = Cli({"approve", "sod-1", "--operation", op, "--fingerprint", hash,
                          "--token-file", pat});
  EXPECT_EQ(own.code(), 2) << own.Describe();
  EXPECT_NE(own.err.find("separation of duties: 'pat' started run 'sod-1'"), std::string::npos)
      << own.err;
  const CliRun scoped = Cli({"approve", "sod-1", "--operation", op, "--fingerprint", hash,
                             "--token-file", narrow});
  EXPECT_EQ(scoped.code(), 2) << scoped.Describe();
  EXPECT_NE(scoped.err.find("calls 'payout'"), std::string::npos) << scoped.err;
  const CliRun unbound = Cli({"approve", "sod-1", "--operation", op});
  EXPECT_EQ(unbound.code(), 2) << unbound.Describe();
  EXPECT_NE(unbound.err.find("--fingerprint"), std::string::npos) << unbound.err;
  EXPECT_TRUE(EventsOfType("sod-1", "ApprovalGranted").empty()) << "a refusal journaled";

  const CliRun other = Cli({"approve", "sod-1", "--operation", op, "--fingerprint", hash,
                            "--note", "checked"});
  EXPECT_EQ(other.code(), 0) << other.Describe();
  ASSERT_TRUE(WaitForStatus("sod-1", "completed")) << Show("sod-1");
  const auto granted = EventsOfType("sod-1", "ApprovalGranted");
  ASSERT_EQ(granted.size(), 1u);
  EXPECT_EQ(granted[0].at("approvedBy"), "approver");
  EXPECT_EQ(granted[0].at("note"), "checked");
  const auto starts = EventsOfType("sod-1", "WorkflowStarted");
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].at("startedBy"), "pat");
}

TEST_F(CliServerTest, ResolveCommittedSettlesTheOperationWithTheRefAPersonFound) {
  Start("r-1", "call_once", Input("unsure", 100));
  ASSERT_TRUE(WaitForState("r-1", "unsure#1", "needs_human")) << Show("r-1");
  const std::string op(Operation("r-1", "unsure#1").at("operation_id").as_string());
  const CliRun unsure = Cli({"resolve", "r-1", "--operation", op});
  EXPECT_EQ(unsure.code(), 2) << unsure.Describe();
  EXPECT_NE(unsure.err.find("say what you found"), std::string::npos) << unsure.err;

  const CliRun resolved = Cli({"resolve", "r-1", "--operation", op, "--committed",
                               "--provider-ref", "ext-42", "--note", "in the ledger"});
  EXPECT_EQ(resolved.code(), 0) << resolved.Describe();
  EXPECT_EQ(resolved.out, "resolved " + op + " of r-1 as committed\n");
  ASSERT_TRUE(WaitForStatus("r-1", "completed")) << Show("r-1");
  const json::object after = Operation("r-1", "unsure#1");
  EXPECT_EQ(after.at("state"), "committed");
  EXPECT_EQ(after.at("provider_ref"), "ext-42");
  EXPECT_EQ(after.at("attempt"), 1) << "nothing was attempted again";
  EXPECT_EQ(json::parse(Show("r-1").at("result_json").as_string()).at("ref"), "ext-42");
  const auto human = EventsOfType("r-1", "HumanResolved");
  ASSERT_EQ(human.size(), 1u);
  EXPECT_EQ(human[0].at("resolvedBy"), "approver");
  EXPECT_EQ(human[0].at("note"), "in the ledger");
}

TEST_F(CliServerTest, ResolveNotCommittedRetriesTheOperation) {
  Start("r-2", "call_once", Input("unsure", 100));
  ASSERT_TRUE(WaitForState("r-2", "unsure#1", "needs_human")) << Show("r-2");
  const std::string op(Operation("r-2", "unsure#1").at("operation_id").as_string());
  const CliRun resolved =
      Cli({"resolve", "r-2", "--operation", op, "--not-committed"});
  EXPECT_EQ(resolved.code(), 0) << resolved.Describe();
  EXPECT_EQ(resolved.out, "resolved " + op + " of r-2 as not committed\n");
  ASSERT_TRUE(WaitForStatus("r-2", "completed")) << Show("r-2");
  const json::object after = Operation("r-2", "unsure#1");
  EXPECT_EQ(after.at("state"), "committed");
  EXPECT_EQ(after.at("attempt"), 2);
  EXPECT_EQ(after.at("provider_ref"), ("un_" + op).c_str()) << "the second attempt's effect";
  EXPECT_EQ(EventsOfType("r-2", "RetryScheduled").size(), 1u);
}

// --- signal, trace ----------------------------------------------------------------------------

TEST_F(CliServerTest, SignalWakesAWorkflowWaitingForIt) {
  Start("s-1", "signal_then_call", SignalInput("go"));
  EXPECT_EQ(Show("s-1").at("status"), "running");
  const CliRun bad = Cli({"signal", "s-1", "go", "--payload", "{not json"});
  EXPECT_EQ(bad.code(), 2) << bad.Describe();
  EXPECT_NE(bad.err.find("--payload is not valid JSON"), std::string::npos) << bad.err;

  const CliRun signalled = Cli({"signal", "s-1", "go", "--payload", R"({"by": "ops"})"});
  EXPECT_EQ(signalled.code(), 0) << signalled.Describe();
  EXPECT_EQ(signalled.out, "signalled s-1 with go\n");
  ASSERT_TRUE(WaitForStatus("s-1", "completed")) << Show("s-1");
  const json::value result = json::parse(Show("s-1").at("result_json").as_string());
  EXPECT_EQ(result.at("signal"), R"({"by":"ops"})");
  EXPECT_EQ(Operation("s-1", "charge#1").at("state"), "committed");
  const auto received = EventsOfType("s-1", "SignalReceived");
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0].at("name"), "go");

  const CliRun ghost = Cli({"signal", "ghost", "go"});
  EXPECT_EQ(ghost.code(), 2) << ghost.Describe();
  EXPECT_NE(ghost.err.find("no active workflow 'ghost'"), std::string::npos) << ghost.err;
}

TEST_F(CliServerTest, ASignalWithARequestIdIsAppliedOnce) {
  Start("s-2", "signal_then_call", SignalInput("go"));
  for (int i = 0; i < 2; ++i) {
    const CliRun signalled = Cli({"signal", "s-2", "go", "--request-id", "req-7"});
    EXPECT_EQ(signalled.code(), 0) << signalled.Describe();
  }
  ASSERT_TRUE(WaitForStatus("s-2", "completed")) << Show("s-2");
  EXPECT_EQ(EventsOfType("s-2", "SignalReceived").size(), 1u);
  const CliRun bad = Cli({"signal", "s-2", "go", "--request-id", "not an id"});
  EXPECT_NE(bad.code(), 0) << bad.Describe();
}

TEST_F(CliServerTest, CompleteDeliversAProvidersCompletionOnce) {
  Start("a-1", "call_once",
        R"({"tool": "webhook_payout", "input": {"account": "acct-1", "amount_cents": 5}})");
  ASSERT_TRUE(WaitForState("a-1", "webhook_payout#1", "awaiting_completion")) << Show("a-1");
  EXPECT_EQ(Show("a-1").at("waits_on"), "completion");
  const std::string op(Operation("a-1", "webhook_payout#1").at("operation_id").as_string());
  const CliRun usage = Cli({"complete", op, "--delivery-id", "evt-1"});
  EXPECT_EQ(usage.code(), 2) << usage.Describe();  // neither --succeeded nor --failed
  const CliRun reader = Cli({"complete", op, "--delivery-id", "evt-1", "--succeeded",
                             "--token-file", server_->TokenFile("reader")});
  EXPECT_NE(reader.code(), 0) << reader.Describe();
  EXPECT_NE(reader.err.find("needs the permission work"), std::string::npos) << reader.err;
  for (int i = 0; i < 2; ++i) {
    const CliRun done = Cli({"complete", op, "--delivery-id", "evt-1", "--succeeded",
                             "--output", R"({"paid": true})"});
    EXPECT_EQ(done.code(), 0) << done.Describe();
  }
  ASSERT_TRUE(WaitForStatus("a-1", "completed")) << Show("a-1");
  EXPECT_EQ(EventsOfType("a-1", "CompletionReceived").size(), 1u);
  const std::string ref(Operation("a-1", "webhook_payout#1").at("provider_ref").as_string());
  EXPECT_EQ(ref.substr(0, 3), "po-") << ref;
}

TEST_F(CliServerTest, TracePrintsTheRunsEffectLines) {
  Start("t-1", "call_once", Input("charge", 4242));
  ASSERT_TRUE(WaitForStatus("t-1", "completed")) << Show("t-1");
  const std::string op(Operation("t-1", "charge#1").at("operation_id").as_string());
  // `show` reports the run completed as soon as the engine decided it, possibly a moment before
  // the batch that completes it is durable; the trace is read from the journal.
  CliRun trace = Cli({"trace", "t-1"});
  for (int i = 0; i < 100 && trace.code() == 0 &&
                  trace.out.find("workflow.completed") == std::string::npos;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    trace = Cli({"trace", "t-1"});
  }
  ASSERT_EQ(trace.code(), 0) << trace.Describe();
  std::vector<std::string> names;
  std::size_t begin = 0;
  while (begin < trace.out.size()) {
    const std::size_t end = trace.out.find('\n', begin);
    ASSERT_NE(end, std::string::npos) << "every line ends with a newline";
    const json::object line = json::parse(trace.out.substr(begin, end - begin)).as_object();
    EXPECT_EQ(line.at("workflow_id"), "t-1");
    names.push_back(std::string(line.at("event").as_string()));
    if (line.contains("id")) {
      EXPECT_EQ(line.at("id"), op.c_str());
      EXPECT_EQ(line.at("tool"), "charge");
    }
    begin = end + 1;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"workflow.started", "operation.prepared",
                                             "operation.attempted", "operation.committed",
                                             "workflow.completed"}))
      << trace.out;
  EXPECT_EQ(trace.out.find("acct-7"), std::string::npos) << "a trace carries no input";
  EXPECT_EQ(trace.out.find("4242"), std::string::npos) << "a trace carries no input";

  const CliRun ghost = Cli({"trace", "ghost"});
  EXPECT_EQ(ghost.code(), 2) << ghost.Describe();
  EXPECT_NE(ghost.err.find("no workflow 'ghost'"), std::string::npos) << ghost.err;
}

// --- list filters -----------------------------------------------------------------------------

TEST_F(CliServerTest, ListFiltersIncludeAndExcludeTheRightRuns) {
  Start("l-done", "call_once", Input("charge", 100));
  Start("l-approval", "call_once", Input("payout", 100));
  Start("l-person", "call_once", Input("unsure", 100));
  Start("l-waiting", "signal_then_call", SignalInput("go"));
  Start("l-cancelled", "signal_then_call", SignalInput("go"));
  ASSERT_EQ(Cli({"cancel", "l-cancelled"}).code(), 0);
  ASSERT_TRUE(WaitForStatus("l-done", "completed")) << Show("l-done");
  ASSERT_TRUE(WaitForState("l-approval", "payout#1", "awaiting_approval"));
  ASSERT_TRUE(WaitForState("l-person", "unsure#1", "needs_human"));

  using Ids = std::set<std::string>;
  EXPECT_EQ(Listed({}), (Ids{"l-done", "l-approval", "l-person", "l-waiting", "l-cancelled"}));
  EXPECT_EQ(Listed({"--status", "completed"}), Ids{"l-done"});
  EXPECT_EQ(Listed({"--status", "running"}), (Ids{"l-approval", "l-person", "l-waiting"}));
  EXPECT_EQ(Listed({"--status", "cancelled"}), Ids{"l-cancelled"});
  EXPECT_EQ(Listed({"--status", "failed"}), Ids{});
  EXPECT_EQ(Listed({"--tool", "charge"}), Ids{"l-done"});
  EXPECT_EQ(Listed({"--tool", "payout"}), Ids{"l-approval"});
  EXPECT_EQ(Listed({"--tool", "no_such_tool"}), Ids{});
  EXPECT_EQ(Listed({"--needs-human"}), (Ids{"l-approval", "l-person"}));
  EXPECT_EQ(Listed({"--needs-human", "--tool", "unsure"}), Ids{"l-person"});
  EXPECT_EQ(Listed({"--status", "completed", "--needs-human"}), Ids{});

  // The table form filters the same way.
  const CliRun table = Cli({"list", "--needs-human"});
  ASSERT_EQ(table.code(), 0) << table.Describe();
  EXPECT_NE(table.out.find("l-approval"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("l-person"), std::string::npos) << table.out;
  for (const char* other : {"l-done", "l-waiting", "l-cancelled"}) {
    EXPECT_EQ(table.out.find(other), std::string::npos) << other << "\n" << table.out;
  }
  EXPECT_NE(table.out.find("2 workflow(s)"), std::string::npos) << table.out;

  const CliRun bogus = Cli({"list", "--status", "sleeping"});
  EXPECT_NE(bogus.code(), 0) << bogus.Describe();
  EXPECT_NE(bogus.err.find("sleeping"), std::string::npos) << bogus.err;
}

// --- list pages --------------------------------------------------------------------------------

// The cursor in a `more: reckon list ... --cursor C (...)` line; empty if there is none.
std::string CursorIn(const std::string& text) {
  const std::size_t at = text.find("--cursor ");
  if (at == std::string::npos) return "";
  const std::size_t begin = at + 9;
  return text.substr(begin, text.find(' ', begin) - begin);
}

// The workflow ids of a `reckon list --json` reply, in its order.
std::vector<std::string> IdsOf(const CliRun& run) {
  std::vector<std::string> ids;
  if (run.code() != 0) return ids;
  const json::value listed = json::parse(run.out);
  for (const json::value& item : listed.as_array()) {
    ids.emplace_back(item.at("workflow_id").as_string());
  }
  return ids;
}

TEST_F(CliServerTest, ListPagesNewestFirstAndAllFollowsTheCursorsToTheEnd) {
  for (int i = 1; i <= 5; ++i) {
    Start("p-" + std::to_string(i), "signal_then_call", SignalInput("go"));
  }
  using Ids = std::vector<std::string>;
  // A page of --limit, and on stderr (stdout stays one JSON array) the command for the next.
  const CliRun first = Cli({"list", "--limit", "2", "--json"});
  ASSERT_EQ(first.code(), 0) << first.Describe();
  EXPECT_EQ(IdsOf(first), (Ids{"p-5", "p-4"}));
  EXPECT_NE(first.err.find("more: reckon list --json --limit 2 --cursor "), std::string::npos)
      << first.err;
  const CliRun second = Cli({"list", "--limit", "2", "--json", "--cursor", CursorIn(first.err)});
  ASSERT_EQ(second.code(), 0) << second.Describe();
  EXPECT_EQ(IdsOf(second), (Ids{"p-3", "p-2"}));
  const CliRun last = Cli({"list", "--limit", "2", "--json", "--cursor", CursorIn(second.err)});
  ASSERT_EQ(last.code(), 0) << last.Describe();
  EXPECT_EQ(IdsOf(last), (Ids{"p-1"}));
  EXPECT_EQ(last.err.find("more:"), std::string::npos) << last.err;

  // --all asks page after page until the last.
  const CliRun all = Cli({"list", "--all", "--limit", "2", "--json"});
  ASSERT_EQ(all.code(), 0) << all.Describe();
  EXPECT_EQ(IdsOf(all), (Ids{"p-5", "p-4", "p-3", "p-2", "p-1"}));
  EXPECT_EQ(all.err.find("more:"), std::string::npos) << all.err;

  // The table says how to go on, with the filters of the page.
  const CliRun table = Cli({"list", "--limit", "3", "--status", "running"});
  ASSERT_EQ(table.code(), 0) << table.Describe();
  EXPECT_NE(table.out.find("3 workflow(s), newest first\nmore: reckon list --status running "
                           "--limit 3 --cursor "),
            std::string::npos)
      << table.out;
  EXPECT_EQ(table.out.find("p-2"), std::string::npos) << table.out;
  const CliRun rest = Cli({"list", "--limit", "3", "--status", "running", "--cursor",
                           CursorIn(table.out)});
  ASSERT_EQ(rest.code(), 0) << rest.Describe();
  EXPECT_NE(rest.out.find("p-2"), std::string::npos) << rest.out;
  EXPECT_NE(rest.out.find("2 workflow(s), newest first\n"), std::string::npos) << rest.out;
  EXPECT_EQ(rest.out.find("more:"), std::string::npos) << rest.out;

  const CliRun too_many = Cli({"list", "--limit", "501"});
  EXPECT_NE(too_many.code(), 0) << too_many.Describe();
}

}  // namespace
}  // namespace reckon::testing
