#include "reckon/api/cli/workflow_commands.h"

#include <boost/json.hpp>

#include <fstream>
#include <memory>
#include <sstream>

#include "reckon/api/cli/bind_command.h"
#include "reckon/api/cli/age_flag.h"
#include "reckon/api/cli/history_export.h"
#include "reckon/api/cli/remote.h"
#include "reckon/protocol/wire_convert.h"
#include "reckon/protocol/wire_json.h"
#include "reckon/base/identifier.h"

namespace reckon::cli {
namespace {

namespace json = boost::json;
namespace wire = api::wire;
using api::Str;

Result<void> Write(CommandEnv& env, const std::string& text) { return WriteOut(env, text); }

Result<void> WriteJson(CommandEnv& env, const json::value& value) {
  return Write(env, json::serialize(value) + "\n");
}

// --- start ------------------------------------------------------------------------------------

struct StartArgs {
  RemoteFlags remote;
  std::string workflow_id;
  std::string type;
  std::string input = "{}";
  std::string input_file;
  std::string run_timeout;  // "3d", "12h", "90s", "500ms"; empty: none
};

Result<void> RunStart(CommandEnv& env, const StartArgs& args) {
  // Refused here, before anything is sent, by the server's rules (base/identifier.h).
  RECKON_TRY(ValidateId(IdKind::kWorkflowId, args.workflow_id));
  RECKON_TRY(ValidateId(IdKind::kWorkflowType, args.type, "--type"));
  std::string input = args.input;
  if (!args.input_file.empty()) {
    std::ifstream file(args.input_file);
    if (!file) {
      return Err(Errc::kInvalidArgument, "cannot read --input-file '" + args.input_file + "'");
    }
    std::ostringstream text;
    text << file.rdbuf();
    input = text.str();
  }
  boost::system::error_code ec;
  (void)json::parse(input, ec);
  if (ec) return Err(Errc::kInvalidArgument, "--input is not valid JSON: " + ec.message());
  auto request = NewRequest();
  auto start = request->getRoot<wire::Request>().initMethod().initStartWorkflow();
  start.setWorkflowId(args.workflow_id);
  start.setWorkflowType(args.type);
  start.setInputJson(input);
  if (!args.run_timeout.empty()) {
    RECKON_TRY(auto timeout, ParseAge(args.run_timeout, "--run-timeout"));
    start.setRunTimeoutMs(std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count());
  }
  RECKON_TRY(api::Reply reply, CallServer(args.remote, std::move(request)));
  auto started = reply.get().getResult().getStarted();
  if (args.remote.json) {
    return WriteJson(env, json::object{{"workflow_id", Str(started.getWorkflowId())},
                                       {"run_id", Str(started.getRunId())}});
  }
  return Write(env, "started " + Str(started.getWorkflowId()) + " (run " +
                        Str(started.getRunId()) + ")\n");
}

// --- list -------------------------------------------------------------------------------------

struct ListArgs {
  RemoteFlags remote;
  std::string status;
  std::string tool;
  bool needs_human = false;
  std::uint32_t limit = 100;  // runs per page (the server takes at most 500)
  std::string cursor;         // where the previous page ended; empty: the newest run
  bool all = false;           // follow the cursors to the oldest run
};

// What the run waits on, for people: "signal 'approved'", "approval of op_...", "timer until
// 2025-01-02 03:04:05 UTC", "nothing" (engine/run_wait.h has the kinds).
std::string WaitText(wire::WorkflowSummary::Reader s) {
  const std::string kind = Str(s.getWaitsOn());
  const std::string detail = Str(s.getWaitDetail());
  if (kind == "signal") {
    return detail.empty() ? "signal (its name was not recorded)" : "signal '" + detail + "'";
  }
  if (kind == "timer") return "timer until " + FormatTimeUs(s.getWaitUntilUs()) + " UTC";
  if (kind == "approval") return "approval of " + detail;
  if (kind == "person") return "a person to resolve " + detail;
  if (kind == "completion") {
    return "the provider's completion of " + detail + " (until " +
           FormatTimeUs(s.getWaitUntilUs()) + " UTC)";
  }
  if (kind == "child") return "child workflow(s) " + detail;
  if (kind == "worker") {
    return "a worker of build " + detail + " (or one declaring it compatible; see reckon workers)";
  }
  return kind;  // nothing, working (an operation the engine drives), stopped (see stuck)
}

std::string StatusText(wire::WorkflowSummary::Reader s) {
  std::string status = Str(s.getStatus());
  if (s.getStuckReason().size() > 0) status += " (stuck)";
  return status;
}

// The command that prints the page after one that ended at `cursor`, with the same filters.
std::string NextPageCommand(const ListArgs& args, const std::string& cursor) {
  std::string command = "reckon list";
  if (!args.status.empty()) command += " --status " + args.status;
  if (!args.tool.empty()) command += " --tool " + args.tool;
  if (args.needs_human) command += " --needs-human";
  if (args.remote.json) command += " --json";
  return command + " --limit " + std::to_string(args.limit) + " --cursor " + cursor;
}

// Pages of at most --limit runs, newest first (the server pages by key, so a page costs the
// same however deep it is); with --all, every page until the oldest run.
Result<void> RunList(CommandEnv& env, const ListArgs& args) {
  json::array out;
  std::vector<std::vector<std::string>> rows = {
      {"WORKFLOW", "TYPE", "STATUS", "OPS", "COMMITTED", "WAITING", "UPDATED (UTC)", "WAITS ON"}};
  std::string cursor = args.cursor;
  std::size_t listed = 0;
  do {
    auto request = NewRequest();
    auto list = request->getRoot<wire::Request>().initMethod().initListWorkflows();
    list.setStatus(args.status);
    list.setTool(args.tool);
    list.setNeedsHuman(args.needs_human);
    list.setLimit(args.limit);
    list.setCursor(cursor);
    RECKON_TRY(api::Reply reply, CallServer(args.remote, std::move(request)));
    auto page = reply.get().getResult().getWorkflowPage();
    for (auto s : page.getWorkflows()) {
      ++listed;
      if (args.remote.json) {
        out.push_back(api::SummaryJson(s));
        continue;
      }
      rows.push_back({Str(s.getWorkflowId()), Str(s.getWorkflowType()), StatusText(s),
                      std::to_string(s.getOperations()),
                      std::to_string(s.getCommittedOperations()),
                      std::to_string(s.getWaitingForPerson()), FormatTimeUs(s.getUpdatedAtUs()),
                      WaitText(s)});
    }
    cursor = Str(page.getNextCursor());
  } while (args.all && !cursor.empty());
  // More runs may follow a full page: the command that lists them. On stderr under --json, so
  // that standard output stays one JSON array.
  const std::string more =
      cursor.empty() ? ""
                     : "more: " + NextPageCommand(args, cursor) + " (or --all for every run)\n";
  if (args.remote.json) {
    RECKON_TRY(WriteJson(env, out));
    env.err << more << std::flush;
    return Ok();
  }
  return Write(env, RenderTable(rows) + std::to_string(listed) + " workflow(s), newest first\n" +
                        more);
}

// --- show -------------------------------------------------------------------------------------

struct IdArgs {
  RemoteFlags remote;
  std::string workflow_id;
};

Result<void> RunShow(CommandEnv& env, const IdArgs& args) {
  RECKON_TRY(ValidateId(IdKind::kWorkflowId, args.workflow_id));
  auto request = NewRequest();
  request->getRoot<wire::Request>().initMethod().initDescribeWorkflow().setWorkflowId(
      args.workflow_id);
  RECKON_TRY(api::Reply reply, CallServer(args.remote, std::move(request)));
  auto detail = reply.get().getResult().getWorkflow();
  auto s = detail.getSummary();
  if (args.remote.json) {
    json::object out = api::SummaryJson(s);
    out["input_json"] = Str(detail.getInputJson());
    out["result_json"] = Str(detail.getResultJson());
    out["started_by"] = Str(detail.getStartedBy());
    json::array ops;
    for (auto o : detail.getOperations()) {
      // The protocol's view, with the input as text under its CLI name (input_json).
      json::object op = api::OperationJson(o);
      op.erase("input");
      op["input_json"] = Str(o.getRedactedInputJson());
      ops.push_back(std::move(op));
    }
    out["operations"] = std::move(ops);
    json::array runs;
    for (auto r : detail.getRuns()) {
      runs.push_back(json::object{{"run_id", Str(r.getRunId())},
                                  {"status", Str(r.getStatus())},
                                  {"created_at_us", r.getCreatedAtUs()},
                                  {"updated_at_us", r.getUpdatedAtUs()}});
    }
    out["runs"] = std::move(runs);
    out["earlier_runs"] = detail.getEarlierRuns();
    if (detail.hasParent() && detail.getParent().getWorkflowId().size() > 0) {
      out["parent"] = json::object{{"workflow_id", Str(detail.getParent().getWorkflowId())},
                                   {"run_id", Str(detail.getParent().getRunId())},
                                   {"close_policy", Str(detail.getParentClosePolicy())}};
    }
    json::array children;
    for (auto c : detail.getChildren()) {
      children.push_back(json::object{{"step_id", Str(c.getStepId())},
                                      {"workflow_id", Str(c.getWorkflowId())},
                                      {"workflow_type", Str(c.getWorkflowType())},
                                      {"policy", Str(c.getPolicy())},
                                      {"status", Str(c.getStatus())}});
    }
    out["children"] = std::move(children);
    if (detail.getCancelRequested()) out["cancel_requested"] = Str(detail.getCancelReason());
    return WriteJson(env, out);
  }
  std::string text;
  text += "workflow  " + Str(s.getWorkflowId()) + " (run " + Str(s.getRunId()) + ")\n";
  text += "type      " + Str(s.getWorkflowType()) + "\n";
  text += "status    " + Str(s.getStatus()) + "\n";
  if (detail.getCancelRequested()) {
    text += "cancel    requested" +
            (detail.getCancelReason().size() > 0 ? " (" + Str(detail.getCancelReason()) + ")"
                                                 : std::string()) +
            "; the workflow code is cleaning up\n";
  }
  if (detail.getRuns().size() > 1) {
    // Runs that continued as new, oldest first: the chain that led to this run.
    std::string chain = detail.getEarlierRuns() > 0
                            ? "(" + std::to_string(detail.getEarlierRuns()) + " earlier) -> "
                            : "";
    for (auto r : detail.getRuns()) {
      if (r.getRunId() != s.getRunId()) chain += Str(r.getRunId()) + " " + Str(r.getStatus()) + " -> ";
    }
    text += "runs      " + chain + Str(s.getRunId()) + " (this run)\n";
  }
  if (detail.hasParent() && detail.getParent().getWorkflowId().size() > 0) {
    text += "parent    " + Str(detail.getParent().getWorkflowId()) + " (run " +
            Str(detail.getParent().getRunId()) + ", on its close: " +
            Str(detail.getParentClosePolicy()) + ")\n";
  }
  for (auto c : detail.getChildren()) {
    text += "child     " + Str(c.getStepId()) + " -> " + Str(c.getWorkflowId()) + " (" +
            Str(c.getWorkflowType()) + ", " + Str(c.getStatus()) + ", policy " +
            Str(c.getPolicy()) + ")\n";
  }
  if (s.getStuckReason().size() > 0) text += "stuck     " + Str(s.getStuckReason()) + "\n";
  text += "waits on  " + WaitText(s) + "\n";
  text += "started   " + FormatTimeUs(s.getCreatedAtUs()) + " UTC" +
          (detail.getStartedBy().size() > 0 ? " by " + Str(detail.getStartedBy()) : "") + "\n";
  text += "updated   " + FormatTimeUs(s.getUpdatedAtUs()) + " UTC\n";
  text += "input     " + Str(detail.getInputJson()) + "\n";
  if (detail.getResultJson().size() > 0) text += "result    " + Str(detail.getResultJson()) + "\n";
  text += "\n";
  std::vector<std::vector<std::string>> rows = {
      {"STEP", "TOOL", "STATE", "ATTEMPT", "OPERATION", "FINGERPRINT", "DETAIL"}};
  std::vector<std::string> waiting;
  for (auto o : detail.getOperations()) {
    std::string detail_text;
    const std::string state = Str(o.getState());
    if (o.getProviderRef().size() > 0) detail_text = "provider_ref=" + Str(o.getProviderRef());
    if (o.getApprovalId().size() > 0) detail_text = "approval=" + Str(o.getApprovalId());
    if (o.getFailureCode().size() > 0 && state != "committed") {
      detail_text = Str(o.getFailureCode()) + ": " + Str(o.getFailureMessage());
    }
    rows.push_back({Str(o.getStepId()), Str(o.getTool()), state, std::to_string(o.getAttempt()),
                    Str(o.getOperationId()), Str(o.getIntentHash()).substr(0, 16), detail_text});
    if (state == "awaiting_approval") {
      waiting.push_back("  reckon approve " + Str(s.getWorkflowId()) + " --operation " +
                        Str(o.getOperationId()) + " --fingerprint " + Str(o.getIntentHash()));
    } else if (state == "needs_human") {
      waiting.push_back("  reckon resolve " + Str(s.getWorkflowId()) + " --operation " +
                        Str(o.getOperationId()) + " --committed --provider-ref REF   (or "
                        "--not-committed)");
    }
  }
  text += RenderTable(rows);
  if (!waiting.empty()) {
    text += "\nwaiting for a person:\n";
    for (const auto& line : waiting) text += line + "\n";
  }
  return Write(env, text);
}

// --- history ----------------------------------------------------------------------------------

struct HistoryArgs {
  RemoteFlags remote;
  HistoryExportArgs export_args;  // its workflow_id is the command's
};

Result<void> RunHistory(CommandEnv& env, const HistoryArgs& history_args) {
  RECKON_TRY(ValidateId(IdKind::kWorkflowId, history_args.export_args.workflow_id));
  if (!history_args.export_args.file.empty()) {
    return ExportHistory(env, history_args.remote, history_args.export_args);
  }
  if (!history_args.export_args.run_id.empty()) {
    if (auto valid = ValidateId(IdKind::kWorkflowId, history_args.export_args.run_id); !valid) {
      return valid.error().WithContext("--run");
    }
  }
  const IdArgs args{history_args.remote, history_args.export_args.workflow_id};
  auto request = NewRequest();
  auto key = request->getRoot<wire::Request>().initMethod().initGetHistory();
  key.setWorkflowId(args.workflow_id);
  key.setRunId(history_args.export_args.run_id);
  RECKON_TRY(api::Reply reply, CallServer(args.remote, std::move(request)));
  auto events = reply.get().getResult().getHistory();
  std::string text;
  json::array out;
  for (auto e : events) {
    RECKON_TRY(std::string body, api::EventPayloadJson(e.getPayload()));
    if (args.remote.json) {
      // The payload is {"<eventType>": {...}}; keep only the inner object.
      json::value parsed = json::parse(body);
      json::value inner = parsed.as_object().empty() ? json::object()
                                                     : parsed.as_object().begin()->value();
      out.push_back(json::object{{"seq", e.getSeq()},
                                 {"recorded_at_us", e.getRecordedAtUs()},
                                 {"type", Str(e.getType())},
                                 {"event", std::move(inner)}});
    } else {
      text += std::to_string(e.getSeq()) + "  " + FormatTimeUs(e.getRecordedAtUs()) + "  " +
              Str(e.getType()) + "  " + body + "\n";
    }
  }
  if (args.remote.json) return WriteJson(env, out);
  return Write(env, text);
}

Result<void> RunTrace(CommandEnv& env, const IdArgs& args) {
  RECKON_TRY(ValidateId(IdKind::kWorkflowId, args.workflow_id));
  auto request = NewRequest();
  request->getRoot<wire::Request>().initMethod().initGetTrace().setWorkflowId(args.workflow_id);
  RECKON_TRY(api::Reply reply, CallServer(args.remote, std::move(request)));
  std::string text;
  for (auto line : reply.get().getResult().getTrace()) text += Str(line) + "\n";
  return Write(env, text);
}

// --- cancel, signal ---------------------------------------------------------------------------

struct CancelArgs {
  RemoteFlags remote;
  std::string workflow_id;
  std::string reason;
};

Result<void> RunCancel(CommandEnv& env, const CancelArgs& args) {
  RECKON_TRY(ValidateId(IdKind::kWorkflowId, args.workflow_id));
  RECKON_TRY(ValidateText(TextKind::kText, args.reason, "--reason"));
  auto request = NewRequest();
  auto cancel = request->getRoot<wire::Request>().initMethod().initCancelWorkflow();
  cancel.setWorkflowId(args.workflow_id);
  cancel.setReason(args.reason);
  RECKON_TRY(CallServer(args.remote, std::move(request)));
  // The code may catch the cancellation to clean up first (worker/workflow_cancelled.h).
  auto describe = NewRequest();
  describe->getRoot<wire::Request>().initMethod().initDescribeWorkflow().setWorkflowId(
      args.workflow_id);
  auto described = CallServer(args.remote, std::move(describe));
  if (described && described.value().get().getResult().getWorkflow().getCancelRequested()) {
    return Write(env, "cancel requested for " + args.workflow_id +
                          "; its code is cleaning up (`reckon show " + args.workflow_id +
                          "` shows when it ends)\n");
  }
  return Write(env, "cancelled " + args.workflow_id + "\n");
}

struct SignalArgs {
  RemoteFlags remote;
  std::string workflow_id;
  std::string name;
  std::string payload = "null";
  std::string request_id;
};

Result<void> RunSignal(CommandEnv& env, const SignalArgs& args) {
  RECKON_TRY(ValidateId(IdKind::kWorkflowId, args.workflow_id));
  RECKON_TRY(ValidateId(IdKind::kSignalName, args.name));
  boost::system::error_code ec;
  (void)json::parse(args.payload, ec);
  if (ec) return Err(Errc::kInvalidArgument, "--payload is not valid JSON: " + ec.message());
  auto request = NewRequest();
  auto signal = request->getRoot<wire::Request>().initMethod().initSignalWorkflow();
  signal.setWorkflowId(args.workflow_id);
  signal.setName(args.name);
  signal.setPayloadJson(args.payload);
  signal.setRequestId(args.request_id);
  RECKON_TRY(CallServer(args.remote, std::move(request)));
  return Write(env, "signalled " + args.workflow_id + " with " + args.name + "\n");
}

}  // namespace

void AddWorkflowCommands(CLI::App& app, CommandEnv& env) {
  {
    auto args = std::make_shared<StartArgs>();
    CLI::App* c = app.add_subcommand("start", "Start a workflow (idempotent on its id)");
    c->add_option("workflow_id", args->workflow_id, "Workflow id: the idempotency key")->required();
    c->add_option("--type", args->type, "Workflow type, as a worker registered it")->required();
    c->add_option("--input", args->input, "Input JSON (default {})");
    c->add_option("--input-file", args->input_file, "Read the input JSON from a file");
    c->add_option("--run-timeout", args->run_timeout,
                  "Fail the run with run_timeout if it has not finished within this long "
                  "(30d, 12h, 15m, 90s, 500ms); effects that may exist are settled first");
    AddRemoteFlags(c, args->remote);
    BindCommand(c, env, args, "start", RunStart);
  }
  {
    auto args = std::make_shared<ListArgs>();
    CLI::App* c = app.add_subcommand("list", "List workflows, newest first, a page at a time");
    c->add_option("--status", args->status, "running | completed | failed | cancelled")
        ->check(CLI::IsMember({"running", "completed", "failed", "cancelled", "continued_as_new"}));
    c->add_option("--tool", args->tool, "Only workflows that called this tool");
    c->add_flag("--needs-human", args->needs_human,
                "Only workflows waiting for a person (approval or resolution)");
    c->add_option("--limit", args->limit,
                  "Workflows per page, newest first (1 to 500; default 100)")
        ->check(CLI::Range(1, 500));
    c->add_option("--cursor", args->cursor,
                  "Start after the page that printed this cursor (its `more:` line)");
    c->add_flag("--all", args->all, "Every page, to the oldest workflow");
    AddRemoteFlags(c, args->remote);
    BindCommand(c, env, args, "list", RunList);
  }
  {
    auto args = std::make_shared<IdArgs>();
    CLI::App* c = app.add_subcommand("show", "Show a workflow's state and its operations");
    c->add_option("workflow_id", args->workflow_id, "Workflow id")->required();
    AddRemoteFlags(c, args->remote);
    BindCommand(c, env, args, "show", RunShow);
  }
  {
    auto args = std::make_shared<HistoryArgs>();
    CLI::App* c = app.add_subcommand(
        "history", "Print a workflow's journaled events, or save them for the replayer (--export)");
    c->add_option("workflow_id", args->export_args.workflow_id, "Workflow id")->required();
    c->add_option("--run", args->export_args.run_id,
                  "One run of the id (an earlier run of a chain, as `reckon show` lists them); "
                  "default: the newest")
        ->type_name("RUN_ID");
    CLI::Option* export_file = c->add_option(
        "--export", args->export_args.file,
        "Write the history file FILE (docs/HISTORY_FORMAT.md) instead of printing")
        ->type_name("FILE");
    CLI::Option* journal = c->add_option(
        "--journal", args->export_args.journal,
        "With --export: read a SQLite journal file (read-only) instead of asking a server")
        ->type_name("PATH");
    journal->needs(export_file);
    c->add_option("--payload-key", args->export_args.payload_key,
                  "With --journal: the journal's payload key file, to open sealed payloads")
        ->type_name("FILE")
        ->needs(journal);
    AddRemoteFlags(c, args->remote);
    BindCommand(c, env, args, "history", RunHistory);
  }
  {
    auto args = std::make_shared<IdArgs>();
    CLI::App* c = app.add_subcommand(
        "trace", "Print a workflow's effect trace (JSON lines; no inputs, results or secrets)");
    c->add_option("workflow_id", args->workflow_id, "Workflow id")->required();
    AddRemoteFlags(c, args->remote);
    BindCommand(c, env, args, "trace", RunTrace);
  }
  {
    auto args = std::make_shared<CancelArgs>();
    CLI::App* c = app.add_subcommand(
        "cancel", "Cancel a workflow (refused while an operation's outcome is unknown)");
    c->add_option("workflow_id", args->workflow_id, "Workflow id")->required();
    c->add_option("--reason", args->reason, "Why; recorded in the journal");
    AddRemoteFlags(c, args->remote);
    BindCommand(c, env, args, "cancel", RunCancel);
  }
  {
    auto args = std::make_shared<SignalArgs>();
    CLI::App* c = app.add_subcommand("signal", "Send a signal to a running workflow");
    c->add_option("workflow_id", args->workflow_id, "Workflow id")->required();
    c->add_option("name", args->name, "Signal name")->required();
    c->add_option("--payload", args->payload, "Payload JSON (default null)");
    c->add_option("--request-id", args->request_id,
                  "Your id of this signal: sending it again with the same id is applied once");
    AddRemoteFlags(c, args->remote);
    BindCommand(c, env, args, "signal", RunSignal);
  }
}

}  // namespace reckon::cli
