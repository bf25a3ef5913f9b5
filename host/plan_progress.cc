#include "reckon/host/plan_progress.h"

#include <type_traits>
#include <variant>

#include "reckon/engine/outbox_message.h"

namespace reckon {

std::string PlanProgress::StepOf(const std::string& operation_id) const {
  auto it = steps_.find(operation_id);
  return it == steps_.end() ? operation_id : it->second;
}

std::string PlanProgress::WaitingCommands() const {
  std::string out;
  for (const auto& [op, command] : waiting_) out += "  " + command + "\n";
  return out;
}

std::optional<std::string> PlanProgress::Line(const storage::Event& event) {
  using namespace storage;
  return std::visit(
      [&](const auto& e) -> std::optional<std::string> {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, WorkflowStarted>) {
          return "plan " + workflow_id_ + " started";
        } else if constexpr (std::is_same_v<T, OperationPrepared>) {
          steps_[e.operation_id] = e.step_id;
          return e.step_id + ": " + e.tool + " prepared (" +
                 std::string(SideEffectName(e.side_effect)) + ", intent " +
                 e.intent_hash.substr(0, 12) + ")";
        } else if constexpr (std::is_same_v<T, ApprovalRequested>) {
          waiting_[e.operation_id] = "reckon approve " + workflow_id_ + " --operation " +
                                     e.operation_id + " --fingerprint " + e.intent_hash;
          return StepOf(e.operation_id) + ": waiting for approval";
        } else if constexpr (std::is_same_v<T, ApprovalGranted>) {
          waiting_.erase(e.operation_id);
          return StepOf(e.operation_id) + ": approved by " + e.approved_by;
        } else if constexpr (std::is_same_v<T, ApprovalDenied>) {
          waiting_.erase(e.operation_id);
          return StepOf(e.operation_id) + ": approval denied by " + e.denied_by +
                 (e.reason.empty() ? "" : " (" + e.reason + ")");
        } else if constexpr (std::is_same_v<T, AttemptStarted>) {
          return StepOf(e.operation_id) + ": attempt " + std::to_string(e.attempt) + " started";
        } else if constexpr (std::is_same_v<T, OperationCommitted>) {
          waiting_.erase(e.operation_id);
          return StepOf(e.operation_id) + ": committed" +
                 (e.provider_ref.empty() ? "" : " (" + e.provider_ref + ")") +
                 (e.source == CommitSource::kAttempt
                      ? ""
                      : " via " + std::string(CommitSourceName(e.source)));
        } else if constexpr (std::is_same_v<T, OperationRejected>) {
          waiting_.erase(e.operation_id);
          return StepOf(e.operation_id) + ": failed: " + e.code +
                 (e.message.empty() ? "" : ": " + e.message);
        } else if constexpr (std::is_same_v<T, AttemptFailedRetryable>) {
          return StepOf(e.operation_id) + ": attempt " + std::to_string(e.attempt) +
                 " not processed (" + e.code + "); will retry";
        } else if constexpr (std::is_same_v<T, OutcomeUnknown>) {
          return StepOf(e.operation_id) + ": outcome unknown (" + e.reason +
                 "); it will be reconciled, not blindly retried";
        } else if constexpr (std::is_same_v<T, ReconciliationResult>) {
          return StepOf(e.operation_id) + ": reconciliation round " + std::to_string(e.round) +
                 ": " + std::string(ReconcileVerdictName(e.result));
        } else if constexpr (std::is_same_v<T, NeedsHuman>) {
          waiting_[e.operation_id] = "reckon resolve " + workflow_id_ + " --operation " +
                                     e.operation_id +
                                     " --committed --provider-ref REF   (or --not-committed)";
          return StepOf(e.operation_id) + ": needs a person: " + e.reason;
        } else if constexpr (std::is_same_v<T, HumanResolved>) {
          waiting_.erase(e.operation_id);
          return StepOf(e.operation_id) + ": resolved by " + e.resolved_by + " as " +
                 (e.committed ? "committed" : "not committed");
        } else if constexpr (std::is_same_v<T, MarkerRecorded>) {
          if (e.kind != kPublishMarker) return std::nullopt;
          auto message = DecodePublishMarker(e.value_json);
          published_.insert(e.step_id);
          return e.step_id + ": published to " +
                 (message ? message.value().subject : std::string("?")) + " (in the outbox)";
        } else if constexpr (std::is_same_v<T, WorkflowCompleted>) {
          finished_ = true;
          status_ = RunStatus::kCompleted;
          result_json_ = e.result_json;
          return "plan " + workflow_id_ + " completed";
        } else if constexpr (std::is_same_v<T, WorkflowFailed>) {
          finished_ = true;
          status_ = RunStatus::kFailed;
          failure_ = e.code + ": " + e.message;
          return "plan " + workflow_id_ + " failed: " + failure_;
        } else if constexpr (std::is_same_v<T, WorkflowCancelled>) {
          finished_ = true;
          status_ = RunStatus::kCancelled;
          return "plan " + workflow_id_ + " cancelled";
        } else {
          return std::nullopt;
        }
      },
      event.body);
}

}  // namespace reckon
