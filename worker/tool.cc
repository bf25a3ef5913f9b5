#include "reckon/worker/tool.h"

#include <boost/json/parse.hpp>

namespace reckon {

void ToolCallContext::Heartbeat() const { Heartbeat(boost::json::value()); }

void ToolCallContext::Heartbeat(const boost::json::value& details) const {
  if (heartbeat) heartbeat->Beat(details);
}

void ToolCallContext::KeepSecret(std::string value) const {
  if (secrets) secrets->Add(std::move(value));
}

boost::json::value ToolCallContext::LastHeartbeatDetails() const {
  if (last_heartbeat_details_json.empty()) return nullptr;
  boost::system::error_code ec;
  boost::json::value parsed = boost::json::parse(last_heartbeat_details_json, ec);
  return ec ? boost::json::value() : parsed;
}

AttemptOutcome ToolSucceeded(boost::json::value output, std::string provider_ref) {
  AttemptOutcome outcome;
  outcome.success = true;
  outcome.output = std::move(output);
  outcome.provider_ref = std::move(provider_ref);
  return outcome;
}

AttemptOutcome ToolFailed(FailureKind kind, std::string code, std::string message) {
  AttemptOutcome outcome;
  outcome.kind = kind;
  outcome.code = std::move(code);
  outcome.message = std::move(message);
  return outcome;
}

AttemptOutcome ToolAccepted(std::string provider_ref) {
  AttemptOutcome outcome;
  outcome.accepted = true;
  outcome.provider_ref = std::move(provider_ref);
  return outcome;
}

Result<void> ToolRegistry::Register(Tool tool) {
  const std::string name = tool.contract.name;
  std::string problems;
  auto add = [&](const std::string& problem) {
    problems += problems.empty() ? "" : "; ";
    problems += problem;
  };
  if (!tool.execute) add("no execute function (set Tool::execute)");
  const bool lookup = tool.contract.reconcile.mode == ReconcileMode::kLookup;
  if (lookup && !tool.reconcile) {
    add("reconcile.mode is lookup but no reconcile function is given (set Tool::reconcile)");
  }
  if (!lookup && tool.reconcile) {
    add("a reconcile function is given but reconcile.mode is not lookup; set the mode or "
        "drop the function");
  }
  if (!problems.empty()) {
    return Err(Errc::kInvalidArgument, "tool '" + name + "': " + problems);
  }
  if (tools_.count(name)) {
    return Err(Errc::kAlreadyExists, "tool '" + name + "' is already registered");
  }
  RECKON_TRY(contracts_.Register(tool.contract));
  tools_.emplace(name, std::move(tool));
  return Ok();
}

std::vector<const Tool*> ToolRegistry::All() const {
  std::vector<const Tool*> all;
  for (const auto& [name, tool] : tools_) all.push_back(&tool);
  return all;
}

const Tool* ToolRegistry::Find(const std::string& name) const {
  auto it = tools_.find(name);
  return it == tools_.end() ? nullptr : &it->second;
}

}  // namespace reckon
