// InspectRun: answers a QueryRequest (engine/workflow_host.h) by building the run's workflow
// afresh from the history it carries, replaying it (the commands the replay issues are
// dropped), and asking the query handler or update validator of that state. Shared by the
// embedded worker (host/local_worker.h) and the remote worker (worker/remote_worker.h), so
// both answer from the same state the same way.
//
// Cost: one replay of the history per question (TODO(perf): answer from a cached instance
// whose state matches the journal). Pure function of its inputs; thread-safe as long as
// `function` is.
#pragma once

#include <string>

#include "reckon/base/error.h"
#include "reckon/engine/workflow_host.h"
#include "reckon/worker/workflow_instance.h"

namespace reckon {

// The query's reply, or "null" for an accepted validation (WorkflowHost::Query's contract).
Result<std::string> InspectRun(const WorkflowFunction& function, const QueryRequest& request);

}  // namespace reckon
