// RunRemoteWorkerFleet: what a worker program's main does in server mode. One RemoteWorker per
// server address (a cluster names every server; each hands the worker the tasks of the runs it
// owns), all with the same registries and options, run on `io` until SIGINT or SIGTERM stops
// them, or until one ends with an error (a refused registration, e.g. a contract that differs
// from the journaled one, or a token the server refuses: revoked, expired): then every one
// stops. `refund-worker` and `reckon worker` use it.
//
// Returns 0 when stopped by a signal, 1 when a worker failed; `report` gets each failure's
// message ("internal error" for an exception). Blocks in io.run() on the calling thread; the
// registries must outlive the call.
#pragma once

#include <boost/asio/io_context.hpp>

#include <functional>
#include <string>
#include <vector>

#include "reckon/worker/remote_worker.h"

namespace reckon {

int RunRemoteWorkerFleet(boost::asio::io_context& io, const WorkflowRegistry& workflows,
                         const ToolRegistry& tools, const RemoteWorkerOptions& options,
                         const std::vector<std::string>& servers,
                         const std::function<void(const std::string&)>& report);

}  // namespace reckon
