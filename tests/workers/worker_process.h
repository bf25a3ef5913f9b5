// RunWorkerProcess: the main loop of a test worker executable (reckon-test-worker,
// reckon-timeouts-worker): a RemoteWorker over `workflows` and `tools` that runs until the
// server ends the session or SIGINT/SIGTERM stops it. Returns the process exit code (0 on a
// clean stop, 1 when the worker ended with an error, which is printed on stderr after
// `program`). The registries must outlive the call. Blocks the calling thread.
#pragma once

#include <string_view>

#include "reckon/worker/remote_worker.h"

namespace reckon::testing {

int RunWorkerProcess(std::string_view program, const WorkflowRegistry& workflows,
                     const ToolRegistry& tools, RemoteWorkerOptions options);

}  // namespace reckon::testing
