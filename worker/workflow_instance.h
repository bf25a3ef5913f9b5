// WorkflowInstance: one live workflow coroutine and its context. Activate() feeds it events
// (the whole history the first time, then only new ones), runs it until it blocks, and returns
// the commands it issued. Owned by the worker; not thread-safe.
#pragma once

#include <boost/json/value.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/engine/command.h"
#include "reckon/storage/event.h"
#include "reckon/worker/task.h"
#include "reckon/worker/workflow_context.h"

namespace reckon {

using WorkflowFunction = std::function<Task<WorkflowOutcome>(WorkflowContext&, boost::json::value)>;

class WorkflowInstance {
 public:
  // `function` must outlive the instance (it lives in the WorkflowRegistry).
  WorkflowInstance(const WorkflowFunction& function, std::string workflow_id, std::string run_id);

  // Errors: kNondeterminism (the message names the step), kInvalidArgument if the first event
  // is not WorkflowStarted or its input is not JSON.
  Result<std::vector<Command>> Activate(std::span<const storage::Event> events,
                                        std::int64_t now_us);
  bool finished() const { return finished_; }
  // Queries and update validation (WorkflowContext::AnswerQuery, ::ValidateUpdate) against
  // the state the last Activate left; nothing is journaled.
  Result<boost::json::value> Query(const std::string& name, const boost::json::value& args) {
    return context_->AnswerQuery(name, args);
  }
  Result<void> ValidateUpdate(const std::string& name, const boost::json::value& args) {
    return context_->ValidateUpdate(name, args);
  }

 private:
  void Finish();

  const WorkflowFunction& function_;
  std::unique_ptr<WorkflowContext> context_;
  Task<WorkflowOutcome> task_;
  bool started_ = false;
  bool finished_ = false;
  // The command that closes the run, held while a child of policy wait still runs.
  std::optional<Command> held_close_;
};

}  // namespace reckon
