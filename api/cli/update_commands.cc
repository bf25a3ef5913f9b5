#include "reckon/api/cli/update_commands.h"

#include <boost/json.hpp>

#include <cstdio>
#include <memory>
#include <random>

#include "reckon/api/cli/bind_command.h"
#include "reckon/api/cli/remote.h"
#include "reckon/protocol/wire_convert.h"
#include "reckon/base/identifier.h"

namespace reckon::cli {
namespace {

namespace json = boost::json;
namespace wire = api::wire;
using api::Str;

Result<void> Write(CommandEnv& env, const std::string& text) { return WriteOut(env, text); }

// The arguments as JSON text ("null" when not given), or why they are not JSON.
Result<json::value> Args(const std::string& text) {
  boost::system::error_code ec;
  json::value args = json::parse(text.empty() ? std::string("null") : text, ec);
  if (ec) {
    return Err(Errc::kInvalidArgument,
               "ARGS_JSON is not valid JSON (" + ec.message() +
                   "); quote it for the shell, e.g. '{\"n\": 1}' or '\"text\"'");
  }
  return args;
}

struct QueryArgs {
  RemoteFlags remote;
  std::string workflow_id;
  std::string name;
  std::string args;
};

Result<void> RunQuery(CommandEnv& env, const QueryArgs& args) {
  RECKON_TRY(ValidateId(IdKind::kWorkflowId, args.workflow_id));
  RECKON_TRY(ValidateId(IdKind::kHandlerName, args.name, "query name"));
  RECKON_TRY(json::value parsed, Args(args.args));
  auto request = NewRequest();
  auto query = request->getRoot<wire::Request>().initMethod().initQueryWorkflow();
  query.setWorkflowId(args.workflow_id);
  query.setName(args.name);
  query.setArgsJson(json::serialize(parsed));
  RECKON_TRY(api::Reply reply, CallServer(args.remote, std::move(request)));
  const std::string answer = Str(reply.get().getResult().getQueryResult());
  if (!args.remote.json) return Write(env, answer + "\n");
  boost::system::error_code ec;
  json::value result = json::parse(answer, ec);
  return Write(env, json::serialize(json::object{{"workflow_id", args.workflow_id},
                                                  {"query", args.name},
                                                  {"result", std::move(result)}}) +
                        "\n");
}

struct UpdateArgs {
  RemoteFlags remote;
  std::string workflow_id;
  std::string name;
  std::string args;
  std::string update_id;
  int wait_s = 60;
};

std::string NewUpdateId() {
  std::random_device random;
  char text[24];
  std::snprintf(text, sizeof text, "cli-%08x%08x", random(), random());
  return text;
}

Result<void> RunUpdate(CommandEnv& env, const UpdateArgs& args) {
  RECKON_TRY(ValidateId(IdKind::kWorkflowId, args.workflow_id));
  RECKON_TRY(ValidateId(IdKind::kHandlerName, args.name, "update name"));
  const std::string update_id = args.update_id.empty() ? NewUpdateId() : args.update_id;
  RECKON_TRY(ValidateId(IdKind::kUpdateId, update_id, "--update-id"));
  RECKON_TRY(json::value parsed, Args(args.args));
  auto request = NewRequest();
  auto update = request->getRoot<wire::Request>().initMethod().initUpdateWorkflow();
  update.setWorkflowId(args.workflow_id);
  update.setName(args.name);
  update.setArgsJson(json::serialize(parsed));
  update.setUpdateId(update_id);
  auto reply = CallServer(args.remote, std::move(request), std::chrono::seconds(args.wait_s));
  if (!reply) {
    // The update may be running still: the same id later gets its one answer.
    return reply.error().WithContext("update '" + update_id + "' of '" + args.workflow_id +
                                     "' (ask again with --update-id " + update_id +
                                     " for its answer; it never runs twice)");
  }
  auto result = reply.value().get().getResult().getUpdateResult();
  const std::string code = Str(result.getErrorCode());
  const std::string answer = Str(result.getResultJson());
  if (args.remote.json) {
    json::object out{{"workflow_id", args.workflow_id}, {"update_id", Str(result.getUpdateId())}};
    if (code.empty()) {
      boost::system::error_code ec;
      out["result"] = json::parse(answer, ec);
    } else {
      out["error"] = json::object{{"code", code}, {"message", Str(result.getErrorMessage())}};
    }
    return Write(env, json::serialize(out) + "\n");
  }
  if (!code.empty()) {
    return Err(Errc::kFailedPrecondition,
               "update '" + Str(result.getUpdateId()) + "' of '" + args.workflow_id +
                   "' was accepted and its handler failed: " + code + ": " +
                   Str(result.getErrorMessage()));
  }
  return Write(env, "update " + Str(result.getUpdateId()) + ": " + answer + "\n");
}

}  // namespace

void AddUpdateCommands(CLI::App& app, CommandEnv& env) {
  {
    auto args = std::make_shared<QueryArgs>();
    CLI::App* c = app.add_subcommand(
        "query", "Ask a running workflow's query handler (journals nothing)");
    c->add_option("workflow_id", args->workflow_id, "Workflow id")->required();
    c->add_option("name", args->name, "Query name, as the workflow code registered it")
        ->required();
    c->add_option("args_json", args->args, "Arguments, JSON (default null)");
    AddRemoteFlags(c, args->remote);
    BindCommand(c, env, args, "query", RunQuery);
  }
  {
    auto args = std::make_shared<UpdateArgs>();
    CLI::App* c = app.add_subcommand(
        "update", "Send an update to a running workflow and wait for its answer");
    c->add_option("workflow_id", args->workflow_id, "Workflow id")->required();
    c->add_option("name", args->name, "Update name, as the workflow code registered it")
        ->required();
    c->add_option("args_json", args->args, "Arguments, JSON (default null)");
    c->add_option("--update-id", args->update_id,
                  "Idempotency key: the same id again gets the first answer (default: a new "
                  "id, printed)");
    c->add_option("--wait", args->wait_s, "Seconds to wait for the answer (default 60)")
        ->check(CLI::Range(1, 86400));
    AddRemoteFlags(c, args->remote);
    BindCommand(c, env, args, "update", RunUpdate);
  }
}

}  // namespace reckon::cli
