// WorkflowHost: where workflow code runs, as the engine sees it. The engine never runs user
// code itself: it hands a run's new events to the host and gets back the commands the code
// issued. In embedded mode the host is the in-process worker (host/local_worker.h); in server
// mode it is a task queue that remote workers poll.
#pragma once

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/engine/command.h"
#include "reckon/storage/event.h"
#include "reckon/storage/rows.h"

namespace reckon {

struct ActivationRequest {
  storage::RunRef run;
  std::string workflow_type;
  // Events the code has not seen yet, in journal order. With `full_history` they are the whole
  // history: the host must build the workflow afresh and replay it.
  std::span<const storage::Event> events;
  bool full_history = false;
  std::int64_t now_us = 0;  // the time ctx.now() returns when it is not replaying
  // Every event decided in the current batch so far, not yet durable; everything before them
  // is in the journal. `events` shows the code only what it has not seen, and the events its
  // own commands produced never reach it (a cached instance does not need them), so a host
  // that must rebuild the run elsewhere takes the journal's history plus these.
  std::span<const storage::Event> batch_events;
};

// A question to a run's code that journals nothing (WorkflowHost::Query): a query handler's
// answer, or an update validator's verdict. The host builds the run afresh from `history` (the
// journal's history, plus the current batch's events when the engine validates an update
// inside a batch) and asks the question of that state; whatever commands the replay issues are
// dropped.
struct QueryRequest {
  storage::RunRef run;
  std::string workflow_type;
  std::span<const storage::Event> history;
  bool validate_update = false;  // true: update `name`'s validator; false: query `name`
  std::string name;
  std::string args_json;  // canonical JSON
};

class WorkflowHost {
 public:
  virtual ~WorkflowHost() = default;

  // Runs the code until it blocks and returns the commands it issued, in order. Errors:
  // kNondeterminism when the code no longer matches its history (the message names the step),
  // kNotFound for an unknown workflow type. The span in `request` is valid only until the
  // returned awaitable first suspends or completes; copy what must live longer.
  virtual boost::asio::awaitable<Result<std::vector<Command>>> Activate(
      ActivationRequest request) = 0;

  // Who ran the activation of `run` that Activate just returned: the worker and its build
  // (server mode), which the engine journals as WorkflowTaskStarted when the run's build
  // changes. nullopt: the host does not say (embedded mode has one worker and no builds). The
  // engine calls it once, right after a successful Activate, before anything else of the run.
  virtual std::optional<storage::WorkflowTaskStarted> TakeRanOn(const storage::RunRef& run) {
    (void)run;
    return std::nullopt;
  }

  // Drops any cached state of the run (it finished, or the engine gave up on it).
  virtual void Evict(const storage::RunRef& run) = 0;

  // Answers `request`: the query's reply as JSON text, or, for a validation, "null" when the
  // validator accepts. Errors: the handler's or validator's own error (a rejection),
  // kNotFound for a handler or workflow type the code lacks, kFailedPrecondition for a handler
  // that tried to issue a command, kDeadlineExceeded when no worker answered in time (server
  // mode), kUnimplemented for a host that cannot answer questions (the default). The span in
  // `request` is valid only until the returned awaitable first suspends; copy what must live
  // longer.
  virtual boost::asio::awaitable<Result<std::string>> Query(QueryRequest request) {
    (void)request;
    co_return Err(Errc::kUnimplemented,
                  "this workflow host does not answer queries or validate updates");
  }
};

}  // namespace reckon
