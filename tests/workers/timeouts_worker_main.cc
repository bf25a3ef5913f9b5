// reckon-timeouts-worker: a server-mode worker for the tests of per-tool timeouts and run
// timeouts (tests/timeouts_server_test.cc). It hosts the test workflows
// (host/testing/test_workflows.h) and three tools whose providers are files in --dir, so the
// test can read the ground truth and the worker can outlive a server:
//
//   hang_write    non_repeatable_write, heartbeat_timeout 400 ms, reconciled by lookup: commits
//                 (a line "<operation id>" in hang_write.ledger), heartbeats {"stage":
//                 "committed"} once, then hangs without heartbeating again. Its lookup reads
//                 the ledger.
//   resume_read   read_only, heartbeat_timeout 400 ms, up to 6 attempts: logs "attempt=N
//                 details=D" (D: LastHeartbeatDetails) to resume_read.log. Without details it
//                 heartbeats {"page": 7} and hangs silently; with details it completes with
//                 {"resumed_from": D, "attempt": N}, unless a file hold-N exists in --dir: then
//                 it keeps heartbeating (no details) until it is stopped.
//   queued_write  non_repeatable_write, schedule_to_start_timeout 300 ms, up to 50 attempts
//                 100 ms apart: commits (a line in queued_write.ledger) and replies.
//
//   reckon-timeouts-worker --server HOST:PORT --dir DIR [--id NAME] [--no-tools]
//                          [--no-workflows]
//
// Runs until SIGTERM/SIGINT (exit 0); exit 1 if the server refuses the registration.
#include <CLI/CLI.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "reckon/protocol/tls_flags.h"
#include "reckon/worker/remote_worker.h"
#include "reckon/host/testing/fast_contracts.h"
#include "reckon/host/testing/test_workflows.h"
#include "tests/workers/worker_process.h"

namespace reckon::testing {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;

void AppendLine(const std::string& path, const std::string& line) {
  std::ofstream out(path, std::ios::app);
  out << line << "\n";
  out.flush();
}

bool HasLine(const std::string& path, const std::string& line) {
  std::ifstream in(path);
  std::string got;
  while (std::getline(in, got)) {
    if (got == line) return true;
  }
  return false;
}

asio::awaitable<void> SleepFor(std::chrono::milliseconds duration) {
  asio::steady_timer timer(co_await asio::this_coro::executor, duration);
  co_await timer.async_wait(asio::use_awaitable);  // throws when the attempt is stopped
}

asio::awaitable<ReconcileOutcome> LookupIn(std::string ledger, ToolCallContext context) {
  const std::string& operation_id = context.operation_id;
  ReconcileOutcome out;
  if (HasLine(ledger, operation_id)) {
    out.verdict = ReconcileVerdict::kCommitted;
    out.output = json::object{{"ref", "ref_" + operation_id}};
    out.provider_ref = "ref_" + operation_id;
  } else {
    out.verdict = ReconcileVerdict::kNotFound;
  }
  co_return out;
}

asio::awaitable<AttemptOutcome> HangWrite(std::string dir, ToolCallContext context) {
  AppendLine(dir + "/hang_write.ledger", context.operation_id);
  context.Heartbeat(json::object{{"stage", "committed"}});
  co_await SleepFor(1h);
  co_return ToolFailed(FailureKind::kUnknown, "woke", "should never wake");
}

asio::awaitable<AttemptOutcome> ResumeRead(std::string dir, ToolCallContext context) {
  const json::value details = context.LastHeartbeatDetails();
  AppendLine(dir + "/resume_read.log", "attempt=" + std::to_string(context.attempt) +
                                           " details=" + json::serialize(details));
  if (details.is_null()) {
    context.Heartbeat(json::object{{"page", 7}});
    co_await SleepFor(1h);  // silent: the heartbeat timeout ends this attempt
  }
  while (std::filesystem::exists(dir + "/hold-" + std::to_string(context.attempt))) {
    context.Heartbeat();
    co_await SleepFor(100ms);
  }
  co_return ToolSucceeded(json::object{{"resumed_from", details}, {"attempt", context.attempt}});
}

asio::awaitable<AttemptOutcome> QueuedWrite(std::string dir, ToolCallContext context) {
  AppendLine(dir + "/queued_write.ledger", context.operation_id);
  co_return ToolSucceeded(json::object{{"ref", "ref_" + context.operation_id}},
                          "ref_" + context.operation_id);
}

Result<void> RegisterTools(ToolRegistry& tools, const std::string& dir) {
  Tool hang;
  hang.contract = FastContract("hang_write", SideEffect::kNonRepeatableWrite);
  hang.contract.attempt_timeout = 2s;
  hang.contract.heartbeat_timeout = 400ms;
  hang.contract.retry.max_attempts = 1;
  hang.contract.reconcile.grace = 100ms;
  hang.execute = [dir](json::value, ToolCallContext context) {
    return HangWrite(dir, std::move(context));
  };
  hang.reconcile = [dir](json::value, ToolCallContext context) {
    return LookupIn(dir + "/hang_write.ledger", std::move(context));
  };
  RECKON_TRY(tools.Register(std::move(hang)));

  Tool resume;
  resume.contract = FastContract("resume_read", SideEffect::kReadOnly);
  resume.contract.attempt_timeout = 30s;
  resume.contract.heartbeat_timeout = 400ms;
  resume.contract.retry.max_attempts = 6;
  resume.contract.retry.backoff = {100ms, 1.0, 100ms};
  resume.execute = [dir](json::value, ToolCallContext context) {
    return ResumeRead(dir, std::move(context));
  };
  RECKON_TRY(tools.Register(std::move(resume)));

  Tool queued;
  queued.contract = FastContract("queued_write", SideEffect::kNonRepeatableWrite);
  queued.contract.attempt_timeout = 3s;
  queued.contract.schedule_to_start_timeout = 300ms;
  queued.contract.retry.max_attempts = 50;
  queued.contract.retry.backoff = {100ms, 1.0, 100ms};
  queued.execute = [dir](json::value, ToolCallContext context) {
    return QueuedWrite(dir, std::move(context));
  };
  queued.reconcile = [dir](json::value, ToolCallContext context) {
    return LookupIn(dir + "/queued_write.ledger", std::move(context));
  };
  return tools.Register(std::move(queued));
}

int Main(int argc, char** argv) {
  RemoteWorkerOptions options;
  CLI::App app("reckon-timeouts-worker: tools with per-tool timeouts for a reckon server.",
               "reckon-timeouts-worker");
  app.add_option("--server", options.server, "reckon server address, HOST:PORT")->required();
  std::string dir, token_file;
  app.add_option("--dir", dir, "directory of the tools' ledgers and logs")->required();
  app.add_option("--token-file", token_file, "file with the worker's API token");
  app.add_option("--id", options.worker_id, "worker id (default: <hostname>-<pid>)");
  bool no_tools = false, no_workflows = false;
  app.add_flag("--no-tools", no_tools, "host the workflows only");
  app.add_flag("--no-workflows", no_workflows, "host the tools only");
  api::AddTlsClientFlags(app, options.connection.tls);
  CLI11_PARSE(app, argc, argv);
  api::ApplyTlsEnvironment(options.connection.tls);
  if (auto loaded = LoadWorkerToken(options, token_file); !loaded) {
    std::fprintf(stderr, "reckon-timeouts-worker: %s\n", loaded.error().ToString().c_str());
    return 2;
  }
  ToolRegistry tools;
  WorkflowRegistry workflows;
  Result<void> registered = Ok();
  if (!no_tools) registered = RegisterTools(tools, dir);
  if (registered && !no_workflows) registered = RegisterTestWorkflows(workflows);
  if (!registered) {
    std::fprintf(stderr, "reckon-timeouts-worker: %s\n", registered.error().ToString().c_str());
    return 1;
  }
  return RunWorkerProcess("reckon-timeouts-worker", workflows, tools, std::move(options));
}

}  // namespace
}  // namespace reckon::testing

int main(int argc, char** argv) { return reckon::testing::Main(argc, argv); }
