#include "reckon/api/cli/workers_command.h"

#include <boost/json.hpp>

#include <memory>
#include <string>
#include <vector>

#include "reckon/api/cli/remote.h"
#include "reckon/protocol/wire_convert.h"

namespace reckon::cli {
namespace {

namespace json = boost::json;
namespace wire = api::wire;
using api::Str;

json::array TextArray(capnp::List<capnp::Text>::Reader list) {
  json::array out;
  for (auto text : list) out.push_back(json::string(Str(text)));
  return out;
}

std::string Joined(capnp::List<capnp::Text>::Reader list, const std::string& empty) {
  std::string out;
  for (auto text : list) out += (out.empty() ? "" : ",") + Str(text);
  return out.empty() ? empty : out;
}

json::object WorkerJson(wire::WorkerInfo::Reader w) {
  json::array tools_held;
  for (auto t : w.getToolTasks()) {
    tools_held.push_back(json::object{{"workflow_id", Str(t.getWorkflowId())},
                                      {"operation_id", Str(t.getOperationId())},
                                      {"tool", Str(t.getTool())},
                                      {"attempt", t.getAttempt()}});
  }
  return json::object{{"worker_id", Str(w.getWorkerId())},
                      {"principal", Str(w.getPrincipal())},
                      {"build_id", Str(w.getBuildId())},
                      {"compatible_builds", TextArray(w.getCompatibleBuilds())},
                      {"workflow_types", TextArray(w.getWorkflowTypes())},
                      {"tools", TextArray(w.getTools())},
                      {"connected_since_us", w.getConnectedSinceUs()},
                      {"workflow_tasks", TextArray(w.getWorkflowTasks())},
                      {"tool_tasks", std::move(tools_held)}};
}

std::string RenderWorkers(wire::WorkerList::Reader list) {
  std::vector<std::vector<std::string>> rows = {{"WORKER", "BUILD", "COMPATIBLE", "WORKFLOW TYPES",
                                                 "TOOLS", "WORKFLOW TASKS", "TOOL TASKS",
                                                 "CONNECTED SINCE"}};
  for (auto w : list.getWorkers()) {
    std::string held_tools;
    for (auto t : w.getToolTasks()) {
      held_tools += (held_tools.empty() ? "" : ",") + Str(t.getWorkflowId()) + "/" +
                    Str(t.getTool()) + "#" + std::to_string(t.getAttempt());
    }
    rows.push_back({Str(w.getWorkerId()), w.getBuildId().size() == 0 ? "-" : Str(w.getBuildId()),
                    Joined(w.getCompatibleBuilds(), "-"), Joined(w.getWorkflowTypes(), "-"),
                    Joined(w.getTools(), "-"), Joined(w.getWorkflowTasks(), "-"),
                    held_tools.empty() ? "-" : held_tools,
                    FormatTimeUs(w.getConnectedSinceUs())});
  }
  std::string text = RenderTable(rows) + std::to_string(list.getWorkers().size()) +
                     " worker(s) connected\n";
  for (auto r : list.getWaiting()) {
    text += "run " + Str(r.getWorkflowId()) + " (" + Str(r.getWorkflowType()) +
            ") waits for a worker of build " + Str(r.getBuildId()) +
            " (or one that declares it compatible)\n";
  }
  return text;
}

Result<void> RunWorkers(CommandEnv& env, const RemoteFlags& remote) {
  auto request = NewRequest();
  request->getRoot<wire::Request>().initMethod().setListWorkers();
  RECKON_TRY(api::Reply reply, CallServer(remote, std::move(request)));
  auto list = reply.get().getResult().getWorkers();
  std::string text;
  if (remote.json) {
    json::array workers;
    for (auto w : list.getWorkers()) workers.push_back(WorkerJson(w));
    json::array waiting;
    for (auto r : list.getWaiting()) {
      waiting.push_back(json::object{{"workflow_id", Str(r.getWorkflowId())},
                                     {"run_id", Str(r.getRunId())},
                                     {"workflow_type", Str(r.getWorkflowType())},
                                     {"build_id", Str(r.getBuildId())}});
    }
    text = json::serialize(json::object{{"workers", std::move(workers)},
                                        {"waiting", std::move(waiting)}}) +
           "\n";
  } else {
    text = RenderWorkers(list);
  }
  return WriteOut(env, text);
}

}  // namespace

void AddWorkersCommand(CLI::App& app, CommandEnv& env) {
  auto remote = std::make_shared<RemoteFlags>();
  CLI::App* c = app.add_subcommand(
      "workers", "List the workers connected to a server: builds, queues, leases held");
  AddRemoteFlags(c, *remote);
  c->callback([&env, remote] {
    if (Result<void> result = RunWorkers(env, *remote); !result) {
      ReportError(env, "workers", result.error());
    }
  });
}

}  // namespace reckon::cli
