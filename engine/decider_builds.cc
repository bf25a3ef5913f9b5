// The decider's part in worker build ids (docs/VERSIONING.md, "Worker build ids"): journaling
// the build that ran a run's code when it changes.
#include "reckon/engine/decider.h"

namespace reckon {

Result<void> Decider::WorkflowTaskRan(storage::WorkflowTaskStarted ran) {
  if (ran.build_id == state_.last_build().value_or("")) return Ok();
  return Emit(std::move(ran));
}

}  // namespace reckon
