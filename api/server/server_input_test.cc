// Bad input on the wire, against the real `reckon server` with a real worker
// (reckon-test-worker, whose tools declare the secret field card_token): every identifier of
// every method refuses a 100 KB value, a newline, bytes that are not UTF-8, a NUL and (where it
// is required) the empty string, with invalid_argument naming the wire field; texts refuse a
// second line; a workflow input, an agent plan or a signal payload with a secret field is
// refused naming the tool and the field. Afterwards nothing of it is in the journal, its WAL,
// the trace or the server's log: not a run, not an event, not a byte of a refused value.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "reckon/protocol/client.h"
#include "reckon/protocol/testing/call_once.h"
#include "reckon/protocol/credentials.h"
#include "reckon/protocol/wire_convert.h"
#include "reckon/base/identifier.h"
#include "reckon/storage/sqlite/sqlite_journal.h"
#include "tests/support/reckon_server.h"

namespace reckon::api {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;
using testing::CliRun;
using testing::Eventually;
using testing::ReckonServer;

// Every refused value holds this (hashes: kHexCanary, as long), so a byte search finds them.
constexpr char kCanary[] = "zzwirecanary";
constexpr char kHexCanary[] = "deadbeefcafe";
// A card token that a client tries to send; it must never be stored.
constexpr char kSecret[] = "tok_SECRET_wire_canary_51";

struct Bad {
  std::string value;
  std::string problem;
};

std::vector<Bad> BadValues(bool hex) {
  const std::string c = hex ? kHexCanary : kCanary;
  return {{c + std::string(100 * 1024, 'x'),
           "it is " + std::to_string(c.size() + 102400) + " bytes long"},
          {c + "\nforged line", "contains a newline (0x0a) at byte 12"},
          {c + "\xc3\x28", "is not valid UTF-8 (byte 0xc3 at byte 12)"},
          {c + std::string("\0tail", 5), "contains a NUL byte at byte 12"},
          {"", " is empty; "}};
}

using Method = wire::Request::Method::Builder;

// One field of one method set to a bad value, the others to good ones.
struct FieldCase {
  std::string field;  // as the message names it
  bool required;      // an empty value is refused too
  std::function<void(Method, const std::string&)> fill;
  bool hex = false;  // a hash: only hex digits
};

const std::string kHash(64, 'a');

std::vector<FieldCase> FieldCases() {
  auto start = [](Method m, const std::string& id, const std::string& type,
                  const std::string& hash) {
    auto s = m.initStartWorkflow();
    s.setWorkflowId(Text(id));
    s.setWorkflowType(Text(type));
    s.setInputJson(R"({"tool":"charge","input":{"account":"a","amount_cents":1}})");
    s.setDefinitionHash(Text(hash));
  };
  auto decide = [](Method m, const std::string& op, const std::string& ap, const std::string& hash,
                   const std::string& by) {
    auto d = m.initDecideApproval();
    d.setWorkflowId("waiting-1");
    d.setOperationId(Text(op));
    d.setApprovalId(Text(ap));
    d.setExpectedIntentHash(Text(hash));
    d.setGranted(true);
    d.setDecidedBy(Text(by));
  };
  auto resolve = [](Method m, const std::string& op, const std::string& by) {
    auto r = m.initResolveOperation();
    r.setWorkflowId("waiting-1");
    r.setOperationId(Text(op));
    r.setResolvedBy(Text(by));
  };
  auto reg = [](Method m, const std::string& worker, const std::string& type,
                const std::string& tool) {
    auto r = m.initRegisterWorker();
    r.setWorkerId(Text(worker));
    r.initWorkflowTypes(1).set(0, Text(type));
    r.initTools(1)[0].setName(Text(tool));
  };
  return {
      {"workflowId", true, [=](Method m, const std::string& v) { start(m, v, "call_once", ""); }},
      {"workflowType", true, [=](Method m, const std::string& v) { start(m, "s-1", v, ""); }},
      {"definitionHash", false,
       [=](Method m, const std::string& v) { start(m, "s-1", "call_once", v); }, true},
      {"workflowId", true,
       [](Method m, const std::string& v) {
         auto s = m.initSignalWorkflow();
         s.setWorkflowId(Text(v));
         s.setName("go");
       }},
      {"name", true,
       [](Method m, const std::string& v) {
         auto s = m.initSignalWorkflow();
         s.setWorkflowId("waiting-1");
         s.setName(Text(v));
       }},
      {"workflowId", true,
       [](Method m, const std::string& v) { m.initCancelWorkflow().setWorkflowId(Text(v)); }},
      {"workflowId", true,
       [](Method m, const std::string& v) { m.initDescribeWorkflow().setWorkflowId(Text(v)); }},
      {"workflowId", true,
       [](Method m, const std::string& v) { m.initGetHistory().setWorkflowId(Text(v)); }},
      {"workflowId", true,
       [](Method m, const std::string& v) { m.initGetTrace().setWorkflowId(Text(v)); }},
      {"workflowId", true,
       [](Method m, const std::string& v) { m.initWatchWorkflow().setWorkflowId(Text(v)); }},
      {"tool", false,
       [](Method m, const std::string& v) { m.initListWorkflows().setTool(Text(v)); }},
      {"operationId", false,
       [=](Method m, const std::string& v) { decide(m, v, "", "", "alice"); }},
      {"approvalId", false, [=](Method m, const std::string& v) { decide(m, "", v, "", "alice"); }},
      {"expectedIntentHash", false,
       [=](Method m, const std::string& v) { decide(m, "op_1", "", v, "alice"); }, true},
      {"decidedBy", false,
       [=](Method m, const std::string& v) { decide(m, "op_1", "", kHash, v); }},
      {"operationId", true, [=](Method m, const std::string& v) { resolve(m, v, "bob"); }},
      {"resolvedBy", false, [=](Method m, const std::string& v) { resolve(m, "op_1", v); }},
      {"workerId", true, [=](Method m, const std::string& v) { reg(m, v, "call_once", "charge"); }},
      {"workflowTypes[0]", true,
       [=](Method m, const std::string& v) { reg(m, "w-2", v, "charge"); }},
      {"tools[0].name", true,
       [=](Method m, const std::string& v) { reg(m, "w-2", "call_once", v); }},
      {"workflowId", true,
       [](Method m, const std::string& v) {
         auto c = m.initCompleteToolTask();
         c.setWorkflowId(Text(v));
         c.setOperationId("op_1");
       }},
      {"operationId", true,
       [](Method m, const std::string& v) {
         auto c = m.initCompleteToolTask();
         c.setWorkflowId("waiting-1");
         c.setOperationId(Text(v));
       }},
  };
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

class ServerInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = ReckonServer::Start(RECKON_CLI_PATH);
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(server).value();
    ASSERT_TRUE(server_->StartWorker(RECKON_TEST_WORKER, "worker"));
    ASSERT_TRUE(Eventually([&] {
      auto message = Request();
      message->getRoot<wire::Request>().initMethod().setListContracts();
      auto listed = Call(std::move(message));
      return listed && listed.value().get().getResult().getContracts().size() == 5;  // charge, payout, unsure, echo, webhook_payout
    })) << "the worker did not register";
    // A run to signal, cancel and decide on: it waits for the signal "go".
    const CliRun started = server_->StartWorkflow(
        "waiting-1", "signal_then_call",
        R"({"signal":"go","tool":"charge","input":{"account":"a","amount_cents":1}})");
    ASSERT_EQ(started.code(), 0) << started.Describe();
  }

  // The role whose token may call the request's method: the approver decides and resolves, a
  // worker registers, polls and reports, the operator does the rest.
  static std::string RoleOf(capnp::MallocMessageBuilder& request) {
    switch (request.getRoot<wire::Request>().getMethod().which()) {
      case wire::Request::Method::DECIDE_APPROVAL:
      case wire::Request::Method::RESOLVE_OPERATION: return "approver";
      case wire::Request::Method::REGISTER_WORKER:
      case wire::Request::Method::POLL_WORKFLOW_TASK:
      case wire::Request::Method::GET_WORKFLOW_TASK_PAGE:
      case wire::Request::Method::COMPLETE_WORKFLOW_TASK:
      case wire::Request::Method::POLL_TOOL_TASK:
      case wire::Request::Method::COMPLETE_TOOL_TASK:
      case wire::Request::Method::HEARTBEAT: return "worker";
      default: return "operator";
    }
  }

  // One request on a fresh connection, with the token of the role that may call it.
  Result<Reply> Call(std::unique_ptr<capnp::MallocMessageBuilder> request) {
    const std::string token_file = server_->TokenFile(RoleOf(*request));
    return testing::CallOnceWithTokenFile(server_->address(), token_file, std::move(request));
  }

  static std::unique_ptr<capnp::MallocMessageBuilder> Request() {
    auto message = std::make_unique<capnp::MallocMessageBuilder>();
    message->initRoot<wire::Request>();
    return message;
  }

  // The error of the request `fill` builds; a failure when it was accepted.
  Error Refusal(const std::function<void(Method)>& fill) {
    auto message = Request();
    fill(message->getRoot<wire::Request>().initMethod());
    auto reply = Call(std::move(message));
    EXPECT_FALSE(reply) << "accepted";
    return reply ? Err(Errc::kInternal, "accepted") : reply.error();
  }

  // Files a refused value must never reach: the journal, its WAL, the trace, the server's log.
  std::vector<std::string> FilesHolding(const std::string& needle) {
    std::vector<std::string> holding;
    const std::string journal = server_->journal_path();
    for (const std::string& path :
         {journal, journal + "-wal", journal + ".trace.jsonl", server_->dir().File("server.log")}) {
      if (std::filesystem::exists(path) && ReadFile(path).find(needle) != std::string::npos) {
        holding.push_back(path);
      }
    }
    return holding;
  }

  std::unique_ptr<ReckonServer> server_;
};

TEST_F(ServerInputTest, EveryIdentifierOfEveryMethodRefusesBadValuesAndNothingIsStored) {
  int refused = 0;
  for (const FieldCase& c : FieldCases()) {
    for (const Bad& bad : BadValues(c.hex)) {
      if (bad.value.empty() && !c.required) continue;
      SCOPED_TRACE(c.field + " = " + QuoteForMessage(bad.value));
      const Error error = Refusal([&](Method m) { c.fill(m, bad.value); });
      EXPECT_EQ(error.code(), Errc::kInvalidArgument) << error.ToString();
      EXPECT_EQ(error.message().rfind(c.field + (bad.value.empty() ? "" : " '"), 0), 0u)
          << error.message();
      EXPECT_NE(error.message().find(bad.problem), std::string::npos) << error.message();
      EXPECT_EQ(error.message().find('\n'), std::string::npos) << error.message();
      ++refused;
    }
  }
  // Texts are one line of at most 1024 bytes.
  const std::string line_two = std::string(kCanary) + "\nline two";
  const Error reason = Refusal([&](Method m) {
    auto cancel = m.initCancelWorkflow();
    cancel.setWorkflowId("waiting-1");
    cancel.setReason(Text(line_two));
  });
  EXPECT_EQ(reason.message().rfind("reason 'zzwirecanary\\x0aline two' is not valid: it "
                                   "contains a newline (0x0a) at byte 12; a text field is at "
                                   "most 1024 bytes of UTF-8 on one line",
                                   0),
            0u)
      << reason.message();
  const std::string long_note = std::string(kCanary) + std::string(2000, 'n');
  const Error note = Refusal([&](Method m) {
    auto r = m.initResolveOperation();
    r.setWorkflowId("waiting-1");
    r.setOperationId("op_1");
    r.setResolvedBy("bob");
    r.setNote(Text(long_note));
  });
  EXPECT_NE(note.message().find("note 'zzwirecanary"), std::string::npos) << note.message();
  EXPECT_GT(refused, 90);

  // The run is as it was; nothing else was journaled.
  auto history = Request();
  history->getRoot<wire::Request>().initMethod().initGetHistory().setWorkflowId("waiting-1");
  auto events = Call(std::move(history));
  ASSERT_TRUE(events) << events.error().ToString();
  for (auto event : events.value().get().getResult().getHistory()) {
    const std::string type = Str(event.getType());
    EXPECT_TRUE(type != "SignalReceived" && type != "WorkflowCancelRequested") << type;
  }
  for (const char* canary : {kCanary, kHexCanary}) {
    EXPECT_EQ(FilesHolding(canary), std::vector<std::string>());
  }
  ASSERT_TRUE(server_->Stop());
  for (const char* canary : {kCanary, kHexCanary}) {
    EXPECT_EQ(FilesHolding(canary), std::vector<std::string>());
  }
  auto journal = storage::OpenSqliteJournal(server_->journal_path());
  ASSERT_TRUE(journal) << journal.error().ToString();
  auto runs = journal.value()->ListRuns();
  ASSERT_TRUE(runs);
  ASSERT_EQ(runs.value().size(), 1u);
  EXPECT_EQ(runs.value()[0].ref.workflow_id, "waiting-1");
  auto contracts = journal.value()->ListContracts();
  ASSERT_TRUE(contracts);
  EXPECT_EQ(contracts.value().size(), 5u) << "a refused registration journals no contract";
}

TEST_F(ServerInputTest, AnInputAPlanOrASignalWithASecretFieldIsRefusedAndNeverStored) {
  // A workflow input over the wire.
  const std::string input = json::serialize(json::object{
      {"tool", "charge"},
      {"input", json::object{{"account", "a"}, {"amount_cents", 1}, {"card_token", kSecret}}}});
  const Error start = Refusal([&](Method m) {
    auto s = m.initStartWorkflow();
    s.setWorkflowId("secret-1");
    s.setWorkflowType("call_once");
    s.setInputJson(Text(input));
  });
  EXPECT_EQ(start.code(), Errc::kInvalidArgument);
  EXPECT_EQ(start.message(),
            "the input of workflow 'secret-1' carries a value for 'card_token', a secret field "
            "of tool 'charge' (at input.card_token); secrets come from the worker's side: the "
            "tool fetches them (e.g. from a vault) when it runs, so they are never journaled. "
            "Remove 'input.card_token'");

  // The same through `reckon start`: exit 2, the server's message, not the secret.
  const CliRun cli_start =
      server_->Cli({"start", "secret-2", "--type", "call_once", "--input", input});
  EXPECT_EQ(cli_start.code(), 2) << cli_start.Describe();
  EXPECT_NE(cli_start.err.find("a secret field of tool 'charge'"), std::string::npos)
      << cli_start.Describe();

  // An agent plan through `reckon plan run`: refused before it is sent, naming step and tool.
  const std::string plan_path = server_->dir().File("secret-plan.json");
  std::ofstream(plan_path) << R"({"plan_id": "secret-plan", "steps": [
      {"id": "pay", "tool": "payout", "input": {"account": "a", "amount_cents": 5,
                                                "card_token": ")"
                           << kSecret << R"("}}]})";
  const CliRun plan_run = server_->Cli({"plan", "run", plan_path});
  EXPECT_EQ(plan_run.code(), 2) << plan_run.Describe();
  EXPECT_NE(plan_run.err.find("step 'pay': input.card_token: 'card_token' is a secret field of "
                              "tool 'payout', and a plan may not carry a value for it: secrets "
                              "come from the worker's side"),
            std::string::npos)
      << plan_run.Describe();
  // The same plan sent straight to the server (a client that skips the CLI's check).
  const Error plan_start = Refusal([&](Method m) {
    auto s = m.initStartWorkflow();
    s.setWorkflowId("secret-plan");
    s.setWorkflowType("plan");
    s.setInputJson(Text(ReadFile(plan_path)));
  });
  EXPECT_NE(plan_start.message().find("step 'pay': input.card_token: 'card_token' is a secret "
                                      "field of tool 'payout'"),
            std::string::npos)
      << plan_start.message();

  // A signal payload.
  const CliRun signal = server_->Cli({"signal", "waiting-1", "go", "--payload",
                                      R"({"card_token":")" + std::string(kSecret) + "\"}"});
  EXPECT_EQ(signal.code(), 2) << signal.Describe();
  EXPECT_NE(signal.err.find("the payload of signal 'go' carries a value for 'card_token'"),
            std::string::npos)
      << signal.Describe();

  for (const CliRun& run : {cli_start, plan_run, signal}) {
    EXPECT_EQ(run.out.find(kSecret), std::string::npos) << run.Describe();
    EXPECT_EQ(run.err.find(kSecret), std::string::npos) << run.Describe();
  }
  for (const Error& error : {start, plan_start}) {
    EXPECT_EQ(error.message().find(kSecret), std::string::npos) << error.message();
  }
  const CliRun show = server_->Cli({"show", "waiting-1"});
  EXPECT_EQ(show.code(), 0) << show.Describe();
  EXPECT_EQ(FilesHolding(kSecret), std::vector<std::string>());
  ASSERT_TRUE(server_->Stop());
  EXPECT_EQ(FilesHolding(kSecret), std::vector<std::string>());
  auto journal = storage::OpenSqliteJournal(server_->journal_path());
  ASSERT_TRUE(journal) << journal.error().ToString();
  auto runs = journal.value()->ListRuns();
  ASSERT_TRUE(runs);
  EXPECT_EQ(runs.value().size(), 1u) << "only waiting-1 was started";
}

}  // namespace
}  // namespace reckon::api
