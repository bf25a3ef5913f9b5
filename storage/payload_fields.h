// Which fields of an event are payloads: the data of a business (a customer's name, an amount,
// a model's reply) as opposed to the journal's own facts. A PayloadCodec (storage/payload_codec.h)
// seals exactly these; every other field (ids, hashes, states, error codes, tool and workflow
// type names, who approved, times, counts, provider references) stays in the clear, so the
// engine's indexes and the server's queries work without the key.
//
// The table, one line per event type that has a payload (docs/JOURNAL_FORMAT.md repeats it):
//
//   WorkflowStarted          input_json    (for a plan run: the plan's text)
//   WorkflowCompleted        result_json
//   WorkflowFailed           message       (may quote the input)
//   WorkflowCancelRequested  reason        (free text from a person)
//   OperationPrepared        input_json    (secret fields already removed)
//   ApprovalGranted          note          (free text from a person)
//   ApprovalDenied           reason        (free text from a person)
//   OperationCommitted       result_json   (the tool's output)
//   OperationRejected        message       (the tool's error message)
//   AttemptFailedRetryable   message, heartbeat_details_json  (the tool's words and progress)
//   OutcomeUnknown           heartbeat_details_json  (the tool's progress)
//   HumanResolved            note          (free text from a person)
//   SignalReceived           payload_json
//   MarkerRecorded           value_json    (now, random, a model reply, a signal name)
//   WorkflowContinuedAsNew   input_json    (the next run's input)
//   ChildWorkflowInitiated   input_json    (the child's input)
//   ChildWorkflowClosed      result_json, message
//   UpdateAccepted           args_json     (what the caller sent)
//   UpdateCompleted          result_json, error_message (the handler's answer)
//
// A sealed event's plaintext is its payload fields in the order of its kMembers array, each as
// a 4-byte little-endian length followed by its bytes. Members added to a type later go at the
// end of its array: a plaintext sealed before they existed ends early, and they read as empty.
// Its authenticated context is the event's place (SealContext). Pure functions; no state.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "reckon/base/error.h"
#include "reckon/storage/event.h"

namespace reckon::storage {

// PayloadMembers<E>::kMembers: pointers to the payload fields of event type E, in plaintext
// order. Types not listed have none.
template <class E>
struct PayloadMembers {
  static constexpr std::array<std::string E::*, 0> kMembers{};
};
#define RECKON_PAYLOAD_MEMBER(Type, field)                                            \
  template <>                                                                         \
  struct PayloadMembers<Type> {                                                       \
    static constexpr std::array<std::string Type::*, 1> kMembers{&Type::field};       \
  }
RECKON_PAYLOAD_MEMBER(WorkflowStarted, input_json);
RECKON_PAYLOAD_MEMBER(WorkflowCompleted, result_json);
RECKON_PAYLOAD_MEMBER(WorkflowFailed, message);
RECKON_PAYLOAD_MEMBER(WorkflowCancelRequested, reason);
RECKON_PAYLOAD_MEMBER(OperationPrepared, input_json);
RECKON_PAYLOAD_MEMBER(ApprovalGranted, note);
RECKON_PAYLOAD_MEMBER(ApprovalDenied, reason);
RECKON_PAYLOAD_MEMBER(OperationCommitted, result_json);
RECKON_PAYLOAD_MEMBER(OperationRejected, message);
RECKON_PAYLOAD_MEMBER(OutcomeUnknown, heartbeat_details_json);
RECKON_PAYLOAD_MEMBER(HumanResolved, note);
RECKON_PAYLOAD_MEMBER(SignalReceived, payload_json);
RECKON_PAYLOAD_MEMBER(MarkerRecorded, value_json);
RECKON_PAYLOAD_MEMBER(WorkflowContinuedAsNew, input_json);
RECKON_PAYLOAD_MEMBER(ChildWorkflowInitiated, input_json);
RECKON_PAYLOAD_MEMBER(UpdateAccepted, args_json);
#undef RECKON_PAYLOAD_MEMBER
template <>
struct PayloadMembers<ChildWorkflowClosed> {
  static constexpr std::array<std::string ChildWorkflowClosed::*, 2> kMembers{
      &ChildWorkflowClosed::result_json, &ChildWorkflowClosed::message};
};

template <>
struct PayloadMembers<UpdateCompleted> {
  static constexpr std::array<std::string UpdateCompleted::*, 2> kMembers{
      &UpdateCompleted::result_json, &UpdateCompleted::error_message};
};

template <>
struct PayloadMembers<AttemptFailedRetryable> {
  static constexpr std::array<std::string AttemptFailedRetryable::*, 2> kMembers{
      &AttemptFailedRetryable::message, &AttemptFailedRetryable::heartbeat_details_json};
};

// Where an event lives in the journal. A sealed payload is bound to it: its box opens only at
// the place it was sealed for.
struct EventPlace {
  std::string_view workflow_id;
  std::string_view run_id;
  std::int64_t seq = 0;
};

// The authenticated context of the payload of an event of type `type_number` at `place`:
// "reckon.sealed.v1", then the workflow id and the run id each as a 4-byte little-endian length
// and its bytes, the seq as 8 bytes and the type number as 4 bytes, little-endian.
std::string SealContext(const EventPlace& place, int type_number);

// True if `body` has a payload field that is not empty: an event the codec seals.
bool HasPayload(const EventBody& body);

// The plaintext a codec seals for `body`: its payload fields, length-prefixed, in order.
std::string PackPayload(const EventBody& body);
// Clears the payload fields of `body` (what stays in the clear of a sealed event).
void ClearPayload(EventBody& body);
// Fills the payload fields of `body` from a plaintext PackPayload made for the same type.
// kCorruption if it does not hold exactly that many fields.
Result<void> UnpackPayload(std::string_view plaintext, EventBody& body);

}  // namespace reckon::storage
