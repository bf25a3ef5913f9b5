// Outbox messages as workflow code publishes them (WorkflowContext::Publish): how a publish is
// journaled, how its message id is derived, and what a valid one is. ARCHITECTURE.md,
// decision 41.
//
// A publish is a marker (RecordMarker / MarkerRecorded) of kind "publish" whose value is
// {"subject": ..., "payload": ...}; the Decider turns each such marker it emits into an
// OutboxMessage of the same append (storage::AppendRequest::outbox), so the message commits
// with the step's events or not at all. A marker travels the wire like any other, so server
// mode needs nothing of its own.
//
// Message ids are derived, never drawn: the same run and step (engine/operation_id.h, IdScope)
// always give the same id, so replay never makes a second message, and the broker (Nats-Msg-Id) and consumers
// deduplicate a redelivery by it. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "reckon/base/error.h"
#include "reckon/base/subject.h"
#include "reckon/engine/operation_id.h"

namespace reckon {

inline constexpr std::string_view kPublishMarker = "publish";
// The limit of one message's payload (NATS's own default maximum is 1 MiB; a message is held in
// the journal and in memory until acknowledged). Subjects: base/subject.h.
inline constexpr std::size_t kMaxPayloadBytes = 256 * 1024;

// "msg_" followed by 32 hex characters of StepDigest over a domain tag of its own, the run's
// scope and the step id (so it never equals the operation id of the same step).
std::string MessageIdFor(const IdScope& scope, std::string_view step_id);

struct PublishValue {
  std::string subject;
  std::string payload;  // UTF-8 text (commonly JSON), at most kMaxPayloadBytes
};

// The marker value of a publish. kInvalidArgument for a subject that breaks the rule, a payload
// over the limit or not valid UTF-8.
Result<std::string> EncodePublishMarker(std::string_view subject, std::string_view payload);
// The subject and payload of a marker value; kInvalidArgument if it is not one.
Result<PublishValue> DecodePublishMarker(std::string_view value_json);

}  // namespace reckon
