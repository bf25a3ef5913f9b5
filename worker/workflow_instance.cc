#include "reckon/worker/workflow_instance.h"

#include <boost/json/serialize.hpp>

#include <exception>

#include "reckon/base/jcs.h"
#include "reckon/base/intent_hash.h"

namespace reckon {

namespace json = boost::json;
using namespace storage;

WorkflowInstance::WorkflowInstance(const WorkflowFunction& function, std::string workflow_id,
                                   std::string run_id)
    : function_(function),
      context_(std::make_unique<WorkflowContext>(std::move(workflow_id), std::move(run_id))) {}

Result<std::vector<Command>> WorkflowInstance::Activate(std::span<const Event> events,
                                                        std::int64_t now_us) {
  // Randomness is seeded from the run's identity, so a replay draws the same values even
  // before it reaches the recorded markers.
  const Sha256Digest seed = Sha256(context_->workflow_id() + "/" + context_->run_id());
  std::uint64_t seed64 = 0;
  for (int i = 0; i < 8; ++i) seed64 = (seed64 << 8) | seed[i];
  context_->BeginActivation(now_us, seed64);
  // Fold every event first: a replayed history must be fully known before the code runs, so
  // that each command the code issues is matched against it.
  if (!started_) {
    if (events.empty() || !std::holds_alternative<WorkflowStarted>(events.front().body)) {
      return Err(Errc::kInvalidArgument, "run '" + context_->workflow_id() +
                                             "': the history does not begin with WorkflowStarted");
    }
  }
  for (const Event& event : events) {
    RECKON_TRY(context_->Observe(event));
  }
  if (!started_) {
    RECKON_TRY(json::value input,
               ParseStrictJson(std::get<WorkflowStarted>(events.front().body).input_json));
    started_ = true;
    task_ = function_(*context_, std::move(input));
    context_->SetMain(&task_);
    task_.Start();  // exceptions are captured in the promise and surface in Finish()
  }
  if (!finished_) {
    context_->RunReady();
    if (task_.done()) Finish();
  }
  if (held_close_ && !context_->HasOpenWaitChildren()) {
    if (auto* next = std::get_if<reckon::ContinueAsNew>(&*held_close_)) {
      context_->CarrySignals(next->signals);
    }
    context_->AddCommand(std::move(*held_close_));
    held_close_.reset();
  }
  RECKON_TRY(context_->CheckDeterminism(finished_));
  return context_->TakeCommands();
}

void WorkflowInstance::Finish() {
  finished_ = true;
  // The close is held (Activate) until every child of policy wait has ended.
  try {
    WorkflowOutcome outcome = task_.Take();
    std::optional<reckon::ContinueAsNew> next = context_->TakeContinuation();
    if (outcome && next) {
      held_close_ = std::move(*next);
    } else if (outcome) {
      auto canonical = CanonicalizeJson(outcome.value());
      if (canonical) {
        held_close_ = CompleteWorkflow{std::move(canonical).value()};
      } else {
        held_close_ = FailWorkflow{"invalid_result", canonical.error().message()};
      }
    } else {
      held_close_ = FailWorkflow{outcome.error().code, outcome.error().message};
    }
  } catch (const WorkflowCancelledError& e) {
    // The code let the cancellation end the run (the decider closes it as cancelled).
    held_close_ = FailWorkflow{std::string(kWorkflowCancelledCode), e.what()};
  } catch (const std::exception& e) {
    // A bug in workflow code: the run fails loudly rather than hanging.
    held_close_ = FailWorkflow{"workflow_exception", e.what()};
  }
}

}  // namespace reckon
