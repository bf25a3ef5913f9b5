// The decider's part in updates (ctx.OnUpdate; docs/ARCHITECTURE.md, decision 45): accepting
// one that passed its validator, journaling the handler's answer, and closing the updates a
// finished run leaves open.
#include "reckon/engine/decider.h"

namespace reckon {

using namespace storage;

Result<void> Decider::AcceptUpdate(const std::string& update_id, const std::string& name,
                                   const std::string& args_json, const std::string& sent_by) {
  if (state_.terminal()) {
    return Err(Errc::kFailedPrecondition,
               "run '" + state_.ref().workflow_id + "' is " +
                   std::string(RunStatusName(state_.status())) + "; it takes no more updates");
  }
  if (state_.updates().count(update_id)) {
    return Err(Errc::kAlreadyExists, "run '" + state_.ref().workflow_id +
                                         "' already accepted update '" + update_id + "'");
  }
  return Emit(UpdateAccepted{update_id, name, args_json, sent_by});
}

Result<void> Decider::FinishUpdate(CompleteUpdate command) {
  auto it = state_.updates().find(command.update_id);
  if (it == state_.updates().end() || it->second.completed) {
    return Err(Errc::kNondeterminism,
               "run '" + state_.ref().workflow_id + "' completed update '" + command.update_id +
                   "', which it has not accepted or completed already; its update handlers "
                   "no longer match its history");
  }
  return Emit(UpdateCompleted{std::move(command.update_id), std::move(command.result_json),
                              std::move(command.error_code), std::move(command.error_message)});
}

Result<void> Decider::CloseOpenUpdates(std::string_view how) {
  std::vector<std::string> open;
  for (const auto& [id, update] : state_.updates()) {
    if (!update.completed) open.push_back(id);
  }
  for (const std::string& id : open) {
    RECKON_TRY(Emit(UpdateCompleted{
        id, "", "run_finished",
        "run '" + state_.ref().workflow_id + "' " + std::string(how) +
            " before the handler of update '" + id + "' returned; the update has no result"}));
  }
  return Ok();
}

}  // namespace reckon
