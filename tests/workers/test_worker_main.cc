// reckon-test-worker: a server-mode worker for tests that drive `reckon server` and the CLI
// through the real binaries. It hosts the test workflows (host/testing/test_workflows.h:
// call_once, sleep_then_call, signal_then_call, call_then_publish) and agent plans (`plan`), and three tools over
// in-memory providers:
//
//   charge  idempotent write; commits and replies (a testkit::FakeProvider)
//   payout  non-repeatable write that always needs approval; commits and replies
//   unsure  non-repeatable write reconciled by lookup: the first attempt of every operation
//           loses its reply without committing and no lookup can tell, so the operation needs
//           a person; an attempt after that (once a person said "not committed") commits
//   echo    read-only; replies {"reversed": its input's memo reversed}, an output that is not
//           a copy of the input (tests/payload_canary_test.cc)
//
//   reckon-test-worker --server HOST:PORT [--id NAME] [--build-id ID [--compatible-with ID]...]
//
// Runs until SIGTERM/SIGINT (exit 0); exit 1 if the server refuses the registration or the
// worker's token (revoked, expired).
#include <CLI/CLI.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <cstdio>
#include <set>

#include "reckon/protocol/tls_flags.h"
#include "reckon/worker/plan_workflow.h"
#include "reckon/worker/remote_worker.h"
#include "reckon/testkit/fake_provider.h"
#include "reckon/host/testing/fast_contracts.h"
#include "reckon/host/testing/test_workflows.h"
#include "tests/workers/worker_process.h"

namespace reckon::testing {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;

// Operation ids whose effect the unsure provider committed.
using Ledger = std::set<std::string>;

std::string UnsureRef(const std::string& operation_id) { return "un_" + operation_id; }

asio::awaitable<AttemptOutcome> UnsureAttempt(Ledger* ledger, ToolCallContext context) {
  if (context.attempt == 1) {
    co_return ToolFailed(FailureKind::kUnknown, "reply_lost",
                         "the connection dropped before the provider answered");
  }
  ledger->insert(context.operation_id);
  const std::string ref = UnsureRef(context.operation_id);
  co_return ToolSucceeded(json::object{{"ref", ref}}, ref);
}

asio::awaitable<ReconcileOutcome> UnsureLookup(const Ledger* ledger, ToolCallContext context) {
  ReconcileOutcome out;
  if (ledger->count(context.operation_id) > 0) {
    const std::string ref = UnsureRef(context.operation_id);
    out.verdict = ReconcileVerdict::kCommitted;
    out.output = json::object{{"ref", ref}};
    out.provider_ref = ref;
  } else {
    out.verdict = ReconcileVerdict::kStillUnknown;
    out.message = "the provider cannot tell";
  }
  co_return out;
}

Tool UnsureTool(Ledger& ledger) {
  Tool tool;
  tool.contract = FastContract("unsure", SideEffect::kNonRepeatableWrite);
  // The reconciliation waits for the hard deadline: keep it short, but long enough for an
  // attempt to reach the worker and come back.
  tool.contract.attempt_timeout = 1s;
  tool.contract.reconcile.max_attempts = 1;
  Ledger* l = &ledger;
  tool.execute = [l](json::value, ToolCallContext context) {
    return UnsureAttempt(l, std::move(context));
  };
  tool.reconcile = [l](json::value, ToolCallContext context) {
    return UnsureLookup(l, std::move(context));
  };
  return tool;
}

Tool EchoTool() {
  Tool tool;
  tool.contract = FastContract("echo", SideEffect::kReadOnly);
  tool.execute = [](json::value input, ToolCallContext) -> asio::awaitable<AttemptOutcome> {
    const json::value* memo = input.as_object().if_contains("memo");
    std::string text = memo != nullptr && memo->is_string() ? std::string(memo->as_string()) : "";
    co_return ToolSucceeded(json::object{{"reversed", std::string(text.rbegin(), text.rend())}});
  };
  return tool;
}

// A provider that accepts and reports later (asynchronous completion): the attempt answers
// "accepted"; the test delivers the completion (POST .../completion, `reckon complete`).
Tool AsyncPayoutTool() {
  Tool tool;
  tool.contract = FastContract("webhook_payout", SideEffect::kNonRepeatableWrite);
  tool.contract.attempt_timeout = 5s;
  tool.contract.completion.deadline = 600s;
  tool.execute = [](json::value, ToolCallContext context) -> asio::awaitable<AttemptOutcome> {
    co_return ToolAccepted("po-" + context.operation_id.substr(0, 12));
  };
  tool.reconcile = [](json::value, ToolCallContext) -> asio::awaitable<ReconcileOutcome> {
    ReconcileOutcome out;
    out.message = "the provider cannot tell";
    co_return out;
  };
  return tool;
}

Result<void> RegisterTools(ToolRegistry& tools, testkit::FakeProvider& provider, Ledger& ledger) {
  RECKON_TRY(tools.Register(AsyncPayoutTool()));
  RECKON_TRY(tools.Register(EchoTool()));
  ToolContract charge = FastContract("charge", SideEffect::kIdempotentWrite);
  charge.attempt_timeout = 5s;
  ToolContract payout = FastContract("payout", SideEffect::kNonRepeatableWrite);
  payout.attempt_timeout = 5s;
  payout.approval = {.kind = ApprovalKind::kAlways, .when = {}, .grant_ttl = 3600s};
  RECKON_TRY(tools.Register(testkit::ProviderTool(std::move(charge), provider)));
  RECKON_TRY(tools.Register(testkit::ProviderTool(std::move(payout), provider)));
  return tools.Register(UnsureTool(ledger));
}

int Main(int argc, char** argv) {
  RemoteWorkerOptions options;
  CLI::App app("reckon-test-worker: test workflows and tools for a reckon server.",
               "reckon-test-worker");
  app.add_option("--server", options.server, "reckon server address, HOST:PORT")->required();
  std::string token_file;
  app.add_option("--token-file", token_file,
                 "file with the worker's API token (default $RECKON_TOKEN_FILE, then "
                 "~/.config/reckon/token)");
  app.add_option("--id", options.worker_id, "worker id (default: <hostname>-<pid>)");
  app.add_option("--build-id", options.build_id, "the worker's build id (empty: unversioned)");
  app.add_option("--compatible-with", options.compatible_builds,
                 "a build whose runs this worker can replay; repeatable");
  api::AddTlsClientFlags(app, options.connection.tls);
  CLI11_PARSE(app, argc, argv);
  api::ApplyTlsEnvironment(options.connection.tls);
  if (auto loaded = LoadWorkerToken(options, token_file); !loaded) {
    std::fprintf(stderr, "reckon-test-worker: %s\n", loaded.error().ToString().c_str());
    return 2;
  }

  testkit::FakeProvider provider;
  Ledger ledger;
  ToolRegistry tools;
  WorkflowRegistry workflows;
  Result<void> registered = RegisterTools(tools, provider, ledger);
  if (registered) registered = RegisterTestWorkflows(workflows);
  if (registered) registered = RegisterPlanWorkflow(workflows);
  if (!registered) {
    std::fprintf(stderr, "reckon-test-worker: %s\n", registered.error().ToString().c_str());
    return 1;
  }

  return RunWorkerProcess("reckon-test-worker", workflows, tools, std::move(options));
}

}  // namespace
}  // namespace reckon::testing

int main(int argc, char** argv) { return reckon::testing::Main(argc, argv); }
