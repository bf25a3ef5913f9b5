#include "reckon/storage/event_codec.h"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>
#include <kj/io.h>

#include <cstring>
#include <type_traits>

#include "reckon/base/enum_names.h"
#include "reckon/storage/events.capnp.h"

namespace reckon::storage {
namespace {

using wire::EventPayload;

kj::StringPtr T(const std::string& s) { return kj::StringPtr(s.c_str(), s.size()); }
std::string S(capnp::Text::Reader text) { return std::string(text.cStr(), text.size()); }
// An enum's name: the names are static, so the text needs no copy.
kj::StringPtr N(std::string_view name) { return kj::StringPtr(name.data(), name.size()); }
std::string_view V(capnp::Text::Reader text) { return std::string_view(text.cStr(), text.size()); }

// --- encoding: one overload per event type ------------------------------------------------

void Encode(EventPayload::Builder p, const WorkflowStarted& e) {
  auto b = p.initWorkflowStarted();
  b.setWorkflowType(T(e.workflow_type));
  b.setInputJson(T(e.input_json));
  b.setDefinitionHash(T(e.definition_hash));
  b.setStartedBy(T(e.started_by));
  b.setIdVersion(e.id_version);
  b.setIdNamespace(T(e.id_namespace));
  b.setPreviousRunId(T(e.previous_run_id));
  b.setParentWorkflowId(T(e.parent_workflow_id));
  b.setParentRunId(T(e.parent_run_id));
  b.setParentClosePolicy(T(e.parent_close_policy));
  b.setRunDeadlineUs(e.run_deadline_us);
  b.setRunTimeoutMs(e.run_timeout_ms);
}
void Encode(EventPayload::Builder p, const ChildWorkflowInitiated& e) {
  auto b = p.initChildWorkflowInitiated();
  b.setStepId(T(e.step_id));
  b.setChildWorkflowId(T(e.child_workflow_id));
  b.setChildRunId(T(e.child_run_id));
  b.setWorkflowType(T(e.workflow_type));
  b.setInputJson(T(e.input_json));
  b.setParentClosePolicy(T(e.parent_close_policy));
}
void Encode(EventPayload::Builder p, const ChildWorkflowClosed& e) {
  auto b = p.initChildWorkflowClosed();
  b.setStepId(T(e.step_id));
  b.setChildWorkflowId(T(e.child_workflow_id));
  b.setChildRunId(T(e.child_run_id));
  b.setStatus(T(e.status));
  b.setResultJson(T(e.result_json));
  b.setCode(T(e.code));
  b.setMessage(T(e.message));
}
void Encode(EventPayload::Builder p, const ChildPolicyApplied& e) {
  auto b = p.initChildPolicyApplied();
  b.setStepId(T(e.step_id));
  b.setChildWorkflowId(T(e.child_workflow_id));
  b.setPolicy(T(e.policy));
}
void Encode(EventPayload::Builder p, const WorkflowContinuedAsNew& e) {
  auto b = p.initWorkflowContinuedAsNew();
  b.setNextRunId(T(e.next_run_id));
  b.setInputJson(T(e.input_json));
}
void Encode(EventPayload::Builder p, const UpdateAccepted& e) {
  auto b = p.initUpdateAccepted();
  b.setUpdateId(T(e.update_id));
  b.setName(T(e.name));
  b.setArgsJson(T(e.args_json));
  b.setSentBy(T(e.sent_by));
}
void Encode(EventPayload::Builder p, const UpdateCompleted& e) {
  auto b = p.initUpdateCompleted();
  b.setUpdateId(T(e.update_id));
  b.setResultJson(T(e.result_json));
  b.setErrorCode(T(e.error_code));
  b.setErrorMessage(T(e.error_message));
}
void Encode(EventPayload::Builder p, const AttemptAccepted& e) {
  auto b = p.initAttemptAccepted();
  b.setOperationId(T(e.operation_id));
  b.setAttempt(e.attempt);
  b.setProviderRef(T(e.provider_ref));
  b.setCompletionDueUs(e.completion_due_us);
}
void Encode(EventPayload::Builder p, const CompletionReceived& e) {
  auto b = p.initCompletionReceived();
  b.setOperationId(T(e.operation_id));
  b.setDeliveryId(T(e.delivery_id));
  b.setSucceeded(e.succeeded);
  b.setCode(T(e.code));
  b.setReceivedBy(T(e.received_by));
}
void Encode(EventPayload::Builder p, const WorkflowCompleted& e) {
  p.initWorkflowCompleted().setResultJson(T(e.result_json));
}
void Encode(EventPayload::Builder p, const WorkflowFailed& e) {
  auto b = p.initWorkflowFailed();
  b.setCode(T(e.code));
  b.setMessage(T(e.message));
}
void Encode(EventPayload::Builder p, const WorkflowCancelRequested& e) {
  auto b = p.initWorkflowCancelRequested();
  b.setReason(T(e.reason));
  b.setRequestedBy(T(e.requested_by));
  b.setToCode(e.to_code);
}
void Encode(EventPayload::Builder p, const WorkflowCancelled&) { p.initWorkflowCancelled(); }
void Encode(EventPayload::Builder p, const WorkflowTaskScheduled&) {
  p.initWorkflowTaskScheduled();
}
void Encode(EventPayload::Builder p, const WorkflowTaskStarted& e) {
  auto started = p.initWorkflowTaskStarted();
  started.setWorker(T(e.worker));
  started.setBuildId(T(e.build_id));
}
void Encode(EventPayload::Builder p, const WorkflowTaskCompleted&) {
  p.initWorkflowTaskCompleted();
}
void Encode(EventPayload::Builder p, const OperationPrepared& e) {
  auto b = p.initOperationPrepared();
  b.setStepId(T(e.step_id));
  b.setOperationId(T(e.operation_id));
  b.setTool(T(e.tool));
  b.setContractHash(T(e.contract_hash));
  b.setIntentHash(T(e.intent_hash));
  b.setSideEffect(N(SideEffectName(e.side_effect)));
  b.setInputJson(T(e.input_json));
  b.setMaxAttempts(e.max_attempts);
  b.setRequireApproval(e.require_approval);
}
void Encode(EventPayload::Builder p, const ApprovalRequested& e) {
  auto b = p.initApprovalRequested();
  b.setOperationId(T(e.operation_id));
  b.setApprovalId(T(e.approval_id));
  b.setIntentHash(T(e.intent_hash));
  b.setDeadlineUs(e.deadline_us);
}
void Encode(EventPayload::Builder p, const ApprovalGranted& e) {
  auto b = p.initApprovalGranted();
  b.setOperationId(T(e.operation_id));
  b.setApprovalId(T(e.approval_id));
  b.setIntentHash(T(e.intent_hash));
  b.setApprovedBy(T(e.approved_by));
  b.setExpiresAtUs(e.expires_at_us);
  b.setNote(T(e.note));
}
void Encode(EventPayload::Builder p, const ApprovalDenied& e) {
  auto b = p.initApprovalDenied();
  b.setOperationId(T(e.operation_id));
  b.setApprovalId(T(e.approval_id));
  b.setDeniedBy(T(e.denied_by));
  b.setReason(T(e.reason));
}
void Encode(EventPayload::Builder p, const AttemptStarted& e) {
  auto b = p.initAttemptStarted();
  b.setOperationId(T(e.operation_id));
  b.setAttempt(e.attempt);
  b.setWorker(T(e.worker));
  b.setDeadlineUs(e.deadline_us);
  b.setApprovalId(T(e.approval_id));
}
void Encode(EventPayload::Builder p, const OperationCommitted& e) {
  auto b = p.initOperationCommitted();
  b.setOperationId(T(e.operation_id));
  b.setAttempt(e.attempt);
  b.setResultJson(T(e.result_json));
  b.setProviderRef(T(e.provider_ref));
  b.setSource(N(CommitSourceName(e.source)));
}
void Encode(EventPayload::Builder p, const OperationRejected& e) {
  auto b = p.initOperationRejected();
  b.setOperationId(T(e.operation_id));
  b.setAttempt(e.attempt);
  b.setCode(T(e.code));
  b.setMessage(T(e.message));
}
void Encode(EventPayload::Builder p, const AttemptFailedRetryable& e) {
  auto b = p.initAttemptFailedRetryable();
  b.setOperationId(T(e.operation_id));
  b.setAttempt(e.attempt);
  b.setCode(T(e.code));
  b.setMessage(T(e.message));
  b.setRetryAtUs(e.retry_at_us);
  b.setHeartbeatDetailsJson(T(e.heartbeat_details_json));
}
void Encode(EventPayload::Builder p, const OutcomeUnknown& e) {
  auto b = p.initOutcomeUnknown();
  b.setOperationId(T(e.operation_id));
  b.setAttempt(e.attempt);
  b.setReason(T(e.reason));
  b.setReconcileAtUs(e.reconcile_at_us);
  b.setHeartbeatDetailsJson(T(e.heartbeat_details_json));
}
void Encode(EventPayload::Builder p, const ReconciliationStarted& e) {
  auto b = p.initReconciliationStarted();
  b.setOperationId(T(e.operation_id));
  b.setRound(e.round);
}
void Encode(EventPayload::Builder p, const ReconciliationResult& e) {
  auto b = p.initReconciliationResult();
  b.setOperationId(T(e.operation_id));
  b.setRound(e.round);
  b.setResult(N(ReconcileVerdictName(e.result)));
  b.setProviderRef(T(e.provider_ref));
  b.setNextAtUs(e.next_at_us);
}
void Encode(EventPayload::Builder p, const NeedsHuman& e) {
  auto b = p.initNeedsHuman();
  b.setOperationId(T(e.operation_id));
  b.setReason(T(e.reason));
}
void Encode(EventPayload::Builder p, const HumanResolved& e) {
  auto b = p.initHumanResolved();
  b.setOperationId(T(e.operation_id));
  b.setCommitted(e.committed);
  b.setProviderRef(T(e.provider_ref));
  b.setResolvedBy(T(e.resolved_by));
  b.setNote(T(e.note));
}
void Encode(EventPayload::Builder p, const TimerStarted& e) {
  auto b = p.initTimerStarted();
  b.setTimerId(T(e.timer_id));
  b.setFireAtUs(e.fire_at_us);
}
void Encode(EventPayload::Builder p, const TimerFired& e) {
  p.initTimerFired().setTimerId(T(e.timer_id));
}
void Encode(EventPayload::Builder p, const SignalReceived& e) {
  auto b = p.initSignalReceived();
  b.setName(T(e.name));
  b.setPayloadJson(T(e.payload_json));
  b.setSentBy(T(e.sent_by));
  b.setRequestId(T(e.request_id));
}
void Encode(EventPayload::Builder p, const MarkerRecorded& e) {
  auto b = p.initMarkerRecorded();
  b.setStepId(T(e.step_id));
  b.setKind(T(e.kind));
  b.setValueJson(T(e.value_json));
}

void Encode(EventPayload::Builder p, const RetryScheduled& e) {
  auto b = p.initRetryScheduled();
  b.setOperationId(T(e.operation_id));
  b.setNextAttempt(e.next_attempt);
  b.setRetryAtUs(e.retry_at_us);
  b.setReason(N(RetryReasonName(e.reason)));
}

// --- decoding -------------------------------------------------------------------------------

Result<EventBody> DecodeUnion(EventPayload::Reader p) {
  switch (p.which()) {
    case EventPayload::WORKFLOW_STARTED: {
      auto r = p.getWorkflowStarted();
      return WorkflowStarted{S(r.getWorkflowType()), S(r.getInputJson()),
                             S(r.getDefinitionHash()), S(r.getStartedBy()), r.getIdVersion(),
                             S(r.getIdNamespace()), S(r.getPreviousRunId()),
                             S(r.getParentWorkflowId()), S(r.getParentRunId()),
                             S(r.getParentClosePolicy()), r.getRunDeadlineUs(),
                             r.getRunTimeoutMs()};
    }
    case EventPayload::WORKFLOW_COMPLETED:
      return WorkflowCompleted{S(p.getWorkflowCompleted().getResultJson())};
    case EventPayload::WORKFLOW_FAILED: {
      auto r = p.getWorkflowFailed();
      return WorkflowFailed{S(r.getCode()), S(r.getMessage())};
    }
    case EventPayload::WORKFLOW_CANCEL_REQUESTED:
      return WorkflowCancelRequested{S(p.getWorkflowCancelRequested().getReason()),
                                     S(p.getWorkflowCancelRequested().getRequestedBy()),
                                     p.getWorkflowCancelRequested().getToCode()};
    case EventPayload::WORKFLOW_CANCELLED: return WorkflowCancelled{};
    case EventPayload::WORKFLOW_TASK_SCHEDULED: return WorkflowTaskScheduled{};
    case EventPayload::WORKFLOW_TASK_STARTED:
      return WorkflowTaskStarted{S(p.getWorkflowTaskStarted().getWorker()),
                                 S(p.getWorkflowTaskStarted().getBuildId())};
    case EventPayload::WORKFLOW_TASK_COMPLETED: return WorkflowTaskCompleted{};
    case EventPayload::OPERATION_PREPARED: {
      auto r = p.getOperationPrepared();
      RECKON_TRY(SideEffect side_effect, FromStored(ParseSideEffect(V(r.getSideEffect())),
                                                    "OperationPrepared.side_effect"));
      return OperationPrepared{S(r.getStepId()),       S(r.getOperationId()),
                               S(r.getTool()),         S(r.getContractHash()),
                               S(r.getIntentHash()),  side_effect,
                               S(r.getInputJson()),    r.getMaxAttempts(),
                               r.getRequireApproval()};
    }
    case EventPayload::APPROVAL_REQUESTED: {
      auto r = p.getApprovalRequested();
      return ApprovalRequested{S(r.getOperationId()), S(r.getApprovalId()),
                               S(r.getIntentHash()), r.getDeadlineUs()};
    }
    case EventPayload::APPROVAL_GRANTED: {
      auto r = p.getApprovalGranted();
      return ApprovalGranted{S(r.getOperationId()), S(r.getApprovalId()), S(r.getIntentHash()),
                             S(r.getApprovedBy()), r.getExpiresAtUs(), S(r.getNote())};
    }
    case EventPayload::APPROVAL_DENIED: {
      auto r = p.getApprovalDenied();
      return ApprovalDenied{S(r.getOperationId()), S(r.getApprovalId()), S(r.getDeniedBy()),
                            S(r.getReason())};
    }
    case EventPayload::ATTEMPT_STARTED: {
      auto r = p.getAttemptStarted();
      return AttemptStarted{S(r.getOperationId()), r.getAttempt(), S(r.getWorker()),
                            r.getDeadlineUs(), S(r.getApprovalId())};
    }
    case EventPayload::OPERATION_COMMITTED: {
      auto r = p.getOperationCommitted();
      RECKON_TRY(CommitSource source, FromStored(ParseCommitSource(V(r.getSource())),
                                                 "OperationCommitted.source"));
      return OperationCommitted{S(r.getOperationId()), r.getAttempt(), S(r.getResultJson()),
                                S(r.getProviderRef()), source};
    }
    case EventPayload::OPERATION_REJECTED: {
      auto r = p.getOperationRejected();
      return OperationRejected{S(r.getOperationId()), r.getAttempt(), S(r.getCode()),
                               S(r.getMessage())};
    }
    case EventPayload::ATTEMPT_FAILED_RETRYABLE: {
      auto r = p.getAttemptFailedRetryable();
      return AttemptFailedRetryable{S(r.getOperationId()), r.getAttempt(), S(r.getCode()),
                                    S(r.getMessage()), r.getRetryAtUs(),
                                    S(r.getHeartbeatDetailsJson())};
    }
    case EventPayload::OUTCOME_UNKNOWN: {
      auto r = p.getOutcomeUnknown();
      return OutcomeUnknown{S(r.getOperationId()), r.getAttempt(), S(r.getReason()),
                            r.getReconcileAtUs(), S(r.getHeartbeatDetailsJson())};
    }
    case EventPayload::RECONCILIATION_STARTED: {
      auto r = p.getReconciliationStarted();
      return ReconciliationStarted{S(r.getOperationId()), r.getRound()};
    }
    case EventPayload::RECONCILIATION_RESULT: {
      auto r = p.getReconciliationResult();
      RECKON_TRY(ReconcileVerdict result, FromStored(ParseReconcileVerdict(V(r.getResult())),
                                                     "ReconciliationResult.result"));
      return ReconciliationResult{S(r.getOperationId()), r.getRound(), result,
                                  S(r.getProviderRef()), r.getNextAtUs()};
    }
    case EventPayload::NEEDS_HUMAN: {
      auto r = p.getNeedsHuman();
      return NeedsHuman{S(r.getOperationId()), S(r.getReason())};
    }
    case EventPayload::HUMAN_RESOLVED: {
      auto r = p.getHumanResolved();
      return HumanResolved{S(r.getOperationId()), r.getCommitted(), S(r.getProviderRef()),
                           S(r.getResolvedBy()), S(r.getNote())};
    }
    case EventPayload::TIMER_STARTED: {
      auto r = p.getTimerStarted();
      return TimerStarted{S(r.getTimerId()), r.getFireAtUs()};
    }
    case EventPayload::TIMER_FIRED: return TimerFired{S(p.getTimerFired().getTimerId())};
    case EventPayload::SIGNAL_RECEIVED: {
      auto r = p.getSignalReceived();
      return SignalReceived{S(r.getName()), S(r.getPayloadJson()), S(r.getSentBy()),
                            S(r.getRequestId())};
    }
    case EventPayload::MARKER_RECORDED: {
      auto r = p.getMarkerRecorded();
      return MarkerRecorded{S(r.getStepId()), S(r.getKind()), S(r.getValueJson())};
    }
    case EventPayload::RETRY_SCHEDULED: {
      auto r = p.getRetryScheduled();
      RECKON_TRY(RetryReason reason,
                 FromStored(ParseRetryReason(V(r.getReason())), "RetryScheduled.reason"));
      return RetryScheduled{S(r.getOperationId()), r.getNextAttempt(), r.getRetryAtUs(),
                            reason};
    }
    case EventPayload::WORKFLOW_CONTINUED_AS_NEW: {
      auto r = p.getWorkflowContinuedAsNew();
      return WorkflowContinuedAsNew{S(r.getNextRunId()), S(r.getInputJson())};
    }
    case EventPayload::CHILD_WORKFLOW_INITIATED: {
      auto r = p.getChildWorkflowInitiated();
      return ChildWorkflowInitiated{S(r.getStepId()),       S(r.getChildWorkflowId()),
                                    S(r.getChildRunId()),   S(r.getWorkflowType()),
                                    S(r.getInputJson()),    S(r.getParentClosePolicy())};
    }
    case EventPayload::CHILD_WORKFLOW_CLOSED: {
      auto r = p.getChildWorkflowClosed();
      return ChildWorkflowClosed{S(r.getStepId()), S(r.getChildWorkflowId()),
                                 S(r.getChildRunId()), S(r.getStatus()),
                                 S(r.getResultJson()), S(r.getCode()), S(r.getMessage())};
    }
    case EventPayload::CHILD_POLICY_APPLIED: {
      auto r = p.getChildPolicyApplied();
      return ChildPolicyApplied{S(r.getStepId()), S(r.getChildWorkflowId()), S(r.getPolicy())};
    }
    case EventPayload::UPDATE_ACCEPTED: {
      auto r = p.getUpdateAccepted();
      return UpdateAccepted{S(r.getUpdateId()), S(r.getName()), S(r.getArgsJson()),
                            S(r.getSentBy())};
    }
    case EventPayload::UPDATE_COMPLETED: {
      auto r = p.getUpdateCompleted();
      return UpdateCompleted{S(r.getUpdateId()), S(r.getResultJson()), S(r.getErrorCode()),
                             S(r.getErrorMessage())};
    }
    case EventPayload::ATTEMPT_ACCEPTED: {
      auto r = p.getAttemptAccepted();
      return AttemptAccepted{S(r.getOperationId()), r.getAttempt(), S(r.getProviderRef()),
                             r.getCompletionDueUs()};
    }
    case EventPayload::COMPLETION_RECEIVED: {
      auto r = p.getCompletionReceived();
      return CompletionReceived{S(r.getOperationId()), S(r.getDeliveryId()), r.getSucceeded(),
                                S(r.getCode()), S(r.getReceivedBy())};
    }
    case EventPayload::SEALED:  // handled by EventDecoder before it gets here
      return Err(Errc::kCorruption, "a sealed event holds another sealed event");
  }
  // A union ordinal this release does not know: written by a newer release.
  return Err(Errc::kFailedPrecondition,
             "unknown event type ordinal " + std::to_string(static_cast<int>(p.which())) +
                 ": the journal was written by a newer release of reckon; upgrade to read it");
}

// The message in the standard flat-array form, written straight into the string.
std::string ToBytes(capnp::MessageBuilder& message) {
  std::string out(capnp::computeSerializedSizeInWords(message) * sizeof(capnp::word), '\0');
  kj::ArrayOutputStream stream(
      kj::arrayPtr(reinterpret_cast<kj::byte*>(out.data()), out.size()));
  capnp::writeMessage(stream, message);
  return out;
}

// The payload of a sealed event: the clear part decoded, then the fields opened into it.
Result<EventBody> OpenSealed(wire::SealedEvent::Reader sealed, const PayloadCodec* codec,
                             const EventPlace* place) {
  RECKON_TRY(EventBody body, DecodeUnion(sealed.getEvent()));
  const std::string key_id = S(sealed.getKeyId());
  if (place == nullptr) {
    return Err(Errc::kFailedPrecondition,
               "a sealed event (payload key '" + key_id +
                   "') arrived outside the journal; sealed payloads are opened only where "
                   "they are stored");
  }
  if (codec == nullptr) {
    return Err(Errc::kFailedPrecondition,
               "the payload is sealed with payload key '" + key_id +
                   "' and the journal was opened without payload keys; open it with the key "
                   "file that holds '" + key_id + "' (reckon server --payload-key FILE)");
  }
  capnp::Data::Reader box = sealed.getBox();
  RECKON_TRY(std::string plaintext,
             codec->Open(key_id,
                         std::string_view(reinterpret_cast<const char*>(box.begin()), box.size()),
                         SealContext(*place, EventTypeNumber(body))));
  RECKON_TRY(UnpackPayload(plaintext, body));
  return body;
}

}  // namespace

std::string EncodeEventBody(const EventBody& body) {
  capnp::MallocMessageBuilder message(64);
  auto payload = message.initRoot<EventPayload>();
  std::visit([&](const auto& event) { Encode(payload, event); }, body);
  return ToBytes(message);
}

Result<std::string> EncodeStoredEvent(const EventBody& body, const EventPlace& place,
                                      const PayloadCodec* codec) {
  if (codec == nullptr || !HasPayload(body)) return EncodeEventBody(body);
  RECKON_TRY(SealedPayload sealed,
             codec->Seal(PackPayload(body), SealContext(place, EventTypeNumber(body))));
  // The clear part is encoded from a copy without the payload: overwriting a text in a
  // builder would leave the old bytes in the message.
  EventBody clear = body;
  ClearPayload(clear);
  // One segment holds the box and the clear part (which is small: no payload).
  capnp::MallocMessageBuilder message(
      static_cast<unsigned>(64 + (sealed.box.size() + sealed.key_id.size()) / sizeof(capnp::word)));
  auto b = message.initRoot<EventPayload>().initSealed();
  auto inner = b.initEvent();
  std::visit([&](const auto& event) { Encode(inner, event); }, clear);
  b.setKeyId(T(sealed.key_id));
  b.setBox(capnp::Data::Reader(reinterpret_cast<const capnp::byte*>(sealed.box.data()),
                               sealed.box.size()));
  return ToBytes(message);
}

Result<EventBody> EventDecoder::Decode(std::span<const std::byte> bytes) {
  return DecodeAt(bytes, nullptr);
}

Result<EventBody> EventDecoder::Decode(std::span<const std::byte> bytes,
                                       const EventPlace& place) {
  return DecodeAt(bytes, &place);
}

Result<EventBody> EventDecoder::DecodeAt(std::span<const std::byte> bytes,
                                         const EventPlace* place) {
  if (bytes.empty() || bytes.size() % sizeof(capnp::word) != 0) {
    return Err(Errc::kCorruption, "event payload of " + std::to_string(bytes.size()) +
                                      " bytes is not a whole number of 8-byte words");
  }
  const std::size_t words = bytes.size() / sizeof(capnp::word);
  if (scratch_.size() < words) scratch_ = kj::heapArray<capnp::word>(words);
  std::memcpy(scratch_.begin(), bytes.data(), bytes.size());
  try {
    capnp::ReaderOptions options;
    options.traversalLimitInWords = words * 4 + 64;
    capnp::FlatArrayMessageReader reader(
        kj::ArrayPtr<const capnp::word>(scratch_.begin(), words), options);
    EventPayload::Reader root = reader.getRoot<EventPayload>();
    if (root.isSealed()) return OpenSealed(root.getSealed(), codec_, place);
    return DecodeUnion(root);
  } catch (const kj::Exception& e) {
    return Err(Errc::kCorruption,
               std::string("event payload does not decode: ") + e.getDescription().cStr());
  }
}

std::string_view EventTypeName(const EventBody& body) {
  static constexpr std::string_view kNames[] = {
      "WorkflowStarted",        "WorkflowCompleted",     "WorkflowFailed",
      "WorkflowCancelRequested", "WorkflowCancelled",    "WorkflowTaskScheduled",
      "WorkflowTaskStarted",    "WorkflowTaskCompleted", "OperationPrepared",
      "ApprovalRequested",      "ApprovalGranted",       "ApprovalDenied",
      "AttemptStarted",         "OperationCommitted",    "OperationRejected",
      "AttemptFailedRetryable", "OutcomeUnknown",        "ReconciliationStarted",
      "ReconciliationResult",   "NeedsHuman",            "HumanResolved",
      "TimerStarted",           "TimerFired",            "SignalReceived",
      "MarkerRecorded",         "RetryScheduled",        "WorkflowContinuedAsNew",
      "ChildWorkflowInitiated", "ChildWorkflowClosed",   "ChildPolicyApplied",
      "UpdateAccepted",         "UpdateCompleted",       "AttemptAccepted",
      "CompletionReceived"};
  static_assert(std::size(kNames) == std::variant_size_v<EventBody>);
  return kNames[body.index()];
}

}  // namespace reckon::storage
