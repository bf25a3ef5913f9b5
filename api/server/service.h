// Service: what each protocol method does on the server (api/protocol/reckon.capnp). The
// connection layer (api/server/server.h) reads a Request, calls Handle, and sends the Response
// it filled; Service knows nothing of sockets.
//
// Contracts declared by workers. A worker's RegisterWorker carries each tool's contract. A new
// tool's contract is validated, journaled (table `contracts`) and registered; a tool already
// known must come with the same contract hash, else the registration is refused naming both
// hashes: a contract never changes under operations that ran with it (give the new contract
// a new tool name). At start the server loads the journaled contracts, so recovery knows them
// before any worker is back.
//
// Threads: one single-threaded executor shared with the engine and the task queues.
#pragma once

#include <boost/asio/awaitable.hpp>

#include <boost/asio/steady_timer.hpp>

#include <map>
#include <memory>
#include <string>

#include "api/protocol/reckon.capnp.h"
#include "api/server/queries.h"
#include "api/server/task_queues.h"
#include "base/error.h"
#include "contract/contract_registry.h"
#include "engine/engine.h"
#include "storage/journal.h"

namespace reckon::api {

// Per-connection state the service needs.
struct SessionState {
  SessionId id = 0;
  bool registered = false;
  std::string worker_id;
};

// Loads the journaled contracts into `registry` (at server start, before Engine::Recover).
Result<int> LoadJournaledContracts(storage::Journal& journal, ContractRegistry& registry);

class Service {
 public:
  // `max_reply_bytes`: the frame limit; a workflow task whose history would not fit fails.
  Service(storage::Journal& journal, ContractRegistry& contracts, Engine& engine,
          TaskQueues& tasks, std::size_t max_reply_bytes);

  // Fills `response` (its id already set) for `request`. Never throws for bad input: every
  // refusal becomes an error reply. `timeout` is the request's deadline, already capped.
  boost::asio::awaitable<void> Handle(SessionState& session, wire::Request::Reader request,
                                      std::chrono::milliseconds timeout,
                                      wire::Response::Builder response);

  // The connection of `session` closed.
  void Disconnected(const SessionState& session);

  // The engine made a batch of `workflow_id` durable: wakes its watchWorkflow long polls.
  void RunChanged(const std::string& workflow_id);

 private:
  boost::asio::awaitable<Result<void>> Dispatch(SessionState& session,
                                                wire::Request::Reader request,
                                                std::chrono::milliseconds timeout,
                                                wire::Response::Builder response);
  boost::asio::awaitable<Result<void>> Start(wire::StartWorkflow::Reader in,
                                             wire::Response::Builder out);
  boost::asio::awaitable<Result<void>> Watch(wire::WatchWorkflow::Reader in,
                                             std::chrono::milliseconds timeout,
                                             wire::Response::Builder out);
  Result<void> Register(SessionState& session, wire::RegisterWorker::Reader in,
                        wire::Response::Builder out);
  boost::asio::awaitable<Result<void>> PollWorkflow(SessionState& session,
                                                    std::chrono::milliseconds wait,
                                                    wire::Response::Builder out);
  boost::asio::awaitable<Result<void>> PollTool(SessionState& session,
                                                std::chrono::milliseconds wait,
                                                wire::Response::Builder out);
  // Whether a polled task can go out on this connection; if not, it goes back to its queue and
  // the reply is noTask.
  template <class View>
  bool Deliverable(std::optional<View>& task, const SessionState& session,
                   wire::Response::Builder out);
  Result<void> CompleteWorkflow(SessionState& session, wire::CompleteWorkflowTask::Reader in,
                                wire::Response::Builder out);
  Result<void> CompleteTool(SessionState& session, wire::CompleteToolTask::Reader in,
                            wire::Response::Builder out);

  storage::Journal& journal_;
  ContractRegistry& contracts_;
  Engine& engine_;
  TaskQueues& tasks_;
  std::size_t max_reply_bytes_;
  Queries queries_;
  // watchWorkflow long polls by workflow id; cancelling the timer wakes the poll.
  std::multimap<std::string, std::shared_ptr<boost::asio::steady_timer>> watchers_;
};

}  // namespace reckon::api
