// WorkerApi: the methods of the worker API (protocol/reckon.capnp; docs/PROTOCOL.md):
// registerWorker, pollWorkflowTask, getWorkflowTaskPage, completeWorkflowTask, pollToolTask,
// completeToolTask and heartbeat. The Service (service.h) hands it every request that is a worker's; everything but
// registerWorker needs a connection that registered first.
//
// Contracts declared by workers. A worker's RegisterWorker carries each tool's contract. A new
// tool's contract is validated, journaled (table `contracts`) and registered; a tool already
// known must come with the same contract hash, else the registration is refused naming both
// hashes: a contract never changes under operations that ran with it (give the new contract
// a new tool name; docs/ARCHITECTURE.md, decision 13). Every declared contract is checked
// before anything is journaled, so a refused registration leaves nothing behind. At start the
// server loads the journaled contracts (LoadJournaledContracts), so recovery knows them before
// any worker is back.
//
// History pages (docs/PROTOCOL.md, "History pages"): a workflow task whose events take more
// than the page budget (TaskQueueOptions::history_page_bytes, at most half the frame limit)
// goes out with its first page and a next-page token; the rest waits in the task queues for
// getWorkflowTaskPage. Only an event that alone would not fit a frame stops a run.
//
// Polls and reports go to the task queues (task_queues.h): a poll long-polls the queues of what
// the session hosts, a report completes the task its token names. A refusal is an error value
// and changes nothing; a worker that sends commands it cannot decode keeps its task.
//
// Ownership: references the journal, contracts and task queues, which outlive it. Threads: the
// one single-threaded executor shared with the engine and the task queues.
#pragma once

#include <boost/asio/awaitable.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "reckon/protocol/reckon.capnp.h"
#include "reckon/api/server/task_queues.h"
#include "reckon/auth/principal.h"
#include "reckon/base/error.h"
#include "reckon/contract/contract_registry.h"
#include "reckon/storage/journal.h"

namespace reckon::api {

// Per-connection state the service needs.
struct SessionState {
  SessionId id = 0;
  std::string peer;       // "IP:PORT", for logs
  std::string principal;  // who registered the session (every later request must be them)
  // The subject of the client certificate the TLS handshake verified (server with
  // --client-ca); empty: none presented, or plaintext.
  std::string client_certificate;
  bool registered = false;
  std::string worker_id;
  // The valid credentials (token hashes) requests on this connection presented: when one is
  // withdrawn (authorizer.h), the connection ends. Few: a connection speaks for one
  // principal, or a handful.
  std::vector<std::string> token_hashes;
  void Authenticated(const std::string& token_hash) {
    if (token_hash.empty()) return;
    if (std::find(token_hashes.begin(), token_hashes.end(), token_hash) == token_hashes.end()) {
      token_hashes.push_back(token_hash);
    }
  }
};

// Loads the journaled contracts into `registry` (at server start, before Engine::Recover).
// Errc::kCorruption names a row that is not a contract or does not hash to its recorded hash.
Result<int> LoadJournaledContracts(storage::Journal& journal, ContractRegistry& registry);

class WorkerApi {
 public:
  // `max_reply_bytes`: the frame limit; a workflow task whose history would not fit fails.
  WorkerApi(storage::Journal& journal, ContractRegistry& contracts, TaskQueues& tasks,
            std::size_t max_reply_bytes);

  // Handles one worker method (a row of the method table, methods.h, whose API is kWorker) for
  // the connection of `session`, whose fields the Service checked; `timeout` is the request's
  // deadline, already capped, and bounds a poll's wait.
  boost::asio::awaitable<Result<void>> Handle(SessionState& session,
                                              const auth::Principal& caller,
                                              wire::Request::Method::Reader method,
                                              std::chrono::milliseconds timeout,
                                              wire::Response::Builder out);

  // The connection of `session` closed (or is being closed): a registered session leaves the
  // task queues and is no longer registered.
  void Disconnected(SessionState& session);

 private:
  Result<void> Register(SessionState& session, const auth::Principal& caller,
                        wire::RegisterWorker::Reader in,
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
  // getWorkflowTaskPage: the page its token names, and the token of the next one.
  Result<void> WorkflowTaskPage(SessionState& session, wire::GetWorkflowTaskPage::Reader in,
                                wire::Response::Builder out);
  // Checks that the reply being built fits a frame; if not, the task cannot be delivered: it
  // fails (the engine stops the run with the reason) and so does the request.
  Result<void> FitsFrame(wire::Response::Builder out, std::uint64_t token,
                         const storage::RunRef& run, const storage::Event& first,
                         const storage::Event& last);
  Result<void> CompleteWorkflow(SessionState& session, wire::CompleteWorkflowTask::Reader in,
                                wire::Response::Builder out);
  Result<void> CompleteTool(SessionState& session, wire::CompleteToolTask::Reader in,
                            wire::Response::Builder out);
  Result<void> Heartbeat(SessionState& session, wire::Heartbeat::Reader in,
                         wire::Response::Builder out);

  storage::Journal& journal_;
  ContractRegistry& contracts_;
  TaskQueues& tasks_;
  std::size_t max_reply_bytes_;
  std::size_t page_bytes_;  // the page budget, capped at half the frame limit
};

}  // namespace reckon::api
