// ClientApi: the methods of the client API (protocol/reckon.capnp; docs/PROTOCOL.md):
// startWorkflow, signalWorkflow, cancelWorkflow, describeWorkflow, listWorkflows, getHistory,
// getTrace, decideApproval, resolveOperation, listContracts, listWorkers and watchWorkflow. The
// Service (service.h) hands it every request that is not a worker's.
//
// Each method reads its fields (checked by then: methods.h), asks the engine or the journal, and fills the response; a
// refusal is an error value (the Service turns it into an error reply) and changes nothing.
// Calls that change a run (start, signal, cancel, decide, resolve) complete once the engine
// made the change durable. An agent plan is validated against the contracts before anything
// is journaled, whoever sent it (docs/ARCHITECTURE.md, decision 18).
//
// watchWorkflow long-polls: it returns the run's events after a sequence number, waiting until
// the engine made a new batch of the run durable (RunChanged) or the wait ran out.
//
// Ownership: references the journal, contracts, engine and task queues, which outlive it.
// Threads: the one single-threaded executor shared with the engine and the task queues.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "reckon/protocol/reckon.capnp.h"
#include "reckon/api/server/queries.h"
#include "reckon/api/server/task_queues.h"
#include "reckon/auth/principal.h"
#include "reckon/base/error.h"
#include "reckon/contract/contract_registry.h"
#include "reckon/engine/engine.h"
#include "reckon/storage/journal.h"

namespace reckon::api {

class ClientApi {
 public:
  ClientApi(storage::Journal& journal, const ContractRegistry& contracts, Engine& engine,
            const TaskQueues& tasks);

  // Handles one client method (a row of the method table, methods.h, whose API is kClient),
  // whose fields the Service checked; `timeout` is the request's deadline, already capped. A
  // method that is not the client API's is refused with Errc::kUnimplemented.
  boost::asio::awaitable<Result<void>> Handle(const auth::Principal& caller,
                                              wire::Request::Method::Reader method,
                                              std::chrono::milliseconds timeout,
                                              wire::Response::Builder out);

  // The engine made a batch of `workflow_id` durable: wakes its watchWorkflow long polls.
  void RunChanged(const std::string& workflow_id);

 private:
  boost::asio::awaitable<Result<void>> Start(const auth::Principal& caller,
                                            wire::StartWorkflow::Reader in,
                                             wire::Response::Builder out);
  // completeOperation: Engine::Complete, delivered by `caller` (journaled as received_by).
  boost::asio::awaitable<Result<void>> Complete(const auth::Principal& caller,
                                                wire::CompleteOperation::Reader in,
                                                wire::Response::Builder out);
  boost::asio::awaitable<Result<void>> Signal(const auth::Principal& caller,
                                             wire::SignalWorkflow::Reader in,
                                              wire::Response::Builder out);
  boost::asio::awaitable<Result<void>> Cancel(const auth::Principal& caller,
                                             wire::CancelWorkflow::Reader in,
                                              wire::Response::Builder out);
  boost::asio::awaitable<Result<void>> Decide(const auth::Principal& caller,
                                             wire::DecideApproval::Reader in,
                                              wire::Response::Builder out);
  boost::asio::awaitable<Result<void>> Resolve(const auth::Principal& caller,
                                              wire::ResolveOperation::Reader in,
                                               wire::Response::Builder out);
  // queryWorkflow and updateWorkflow (api/server/client_api_updates.cc).
  boost::asio::awaitable<Result<void>> Query(wire::QueryWorkflow::Reader in,
                                             wire::Response::Builder out);
  boost::asio::awaitable<Result<void>> Update(const auth::Principal& caller,
                                              wire::UpdateWorkflow::Reader in,
                                              wire::Response::Builder out);
  boost::asio::awaitable<Result<void>> Watch(wire::WatchWorkflow::Reader in,
                                             std::chrono::milliseconds timeout,
                                             wire::Response::Builder out);

  // kPermissionDenied when `caller` is scoped to tools and the operation named (by id, else
  // by approval id) calls another.
  Result<void> CheckToolScope(const auth::Principal& caller, const std::string& workflow_id,
                              const std::string& operation_id,
                              const std::string& approval_id) const;

  storage::Journal& journal_;
  const ContractRegistry& contracts_;
  Engine& engine_;
  const TaskQueues& tasks_;
  Queries queries_;
  // watchWorkflow long polls by workflow id; cancelling the timer wakes the poll.
  std::multimap<std::string, std::shared_ptr<boost::asio::steady_timer>> watchers_;
};

}  // namespace reckon::api
