// listWorkers (docs/PROTOCOL.md): the worker connections the task queues hold now, with their
// builds, what they poll and the leases they hold, and the runs that wait for a worker of
// their build (docs/VERSIONING.md, "Worker build ids"). Read-only; memory only, nothing from
// the journal. Called on the event loop that owns the task queues.
#pragma once

#include "reckon/protocol/reckon.capnp.h"
#include "reckon/api/server/task_queues.h"
#include "reckon/base/error.h"

namespace reckon::api {

Result<void> ListWorkers(const TaskQueues& tasks, wire::Response::Builder out);

// For describeWorkflow: when the described run's workflow task waits because no connected
// worker may take it, its summary says so: waitsOn "worker", waitDetail the build it needs.
// Leaves `out` alone otherwise (or when it holds no workflow).
void NoteBuildWait(const TaskQueues& tasks, const std::string& workflow_id,
                   wire::Response::Builder out);

}  // namespace reckon::api
