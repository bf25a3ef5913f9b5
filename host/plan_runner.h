// RunPlan: runs an agent plan on an embedded host, as a library call. The plan is validated
// against the host's tool contracts (every problem at once, nothing journaled when invalid),
// started as a `plan` workflow under its plan_id with its canonical hash journaled, and
// followed until only a person can let it go on or it ended. A program that hosts the plan's
// tools (the refund sample's `refund-agent plan FILE`) wraps it; `reckon plan run --server`
// is the same thing on a server.
//
// Idempotent: the same plan under the same plan_id resumes (after a crash the host's Recover()
// has already resumed it) or reports the finished run; another plan under a used plan_id is
// refused (Errc::kAlreadyExists).
//
// Progress: `on_line` gets one line per durable event a person cares about (PlanProgress),
// including the events of an earlier life of the process, in journal order.
#pragma once

#include <boost/asio/awaitable.hpp>

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "reckon/base/error.h"
#include "reckon/plan/plan.h"
#include "reckon/host/embedded_host.h"
#include "reckon/host/plan_progress.h"

namespace reckon {

struct PlanRunOptions {
  // Grant approvals as this person when set (what `reckon approve` does); else a step that
  // needs approval leaves the run waiting.
  std::optional<std::string> approve_as;
  std::function<void(const std::string& line)> on_line;  // may be empty
};

struct PlanRunReport {
  PlanProgress progress;                      // status, result, what waits for a person
  std::map<std::string, std::string> states;  // step id -> operation state name
};

// Requires the plan workflow registered on the host (RegisterPlanWorkflow) and Recover() done.
// Errors: kInvalidArgument (the plan does not validate), kAlreadyExists (another plan ran under
// its id), kUnavailable (the engine stopped).
boost::asio::awaitable<Result<PlanRunReport>> RunPlan(EmbeddedHost& host, const Plan& plan,
                                                      PlanRunOptions options);

}  // namespace reckon
