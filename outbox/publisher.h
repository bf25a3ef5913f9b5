// Publisher: where the outbox dispatcher (outbox/dispatcher.h) hands a message, the seam between
// it and the broker. Implementations: outbox/nats_publisher.h (NATS JetStream over libnats);
// tests use fakes that behave (a broker that deduplicates by id, one that is down).
//
// Threading: called from the dispatcher's thread only, never from the engine's; a call may
// block until the broker acknowledges or its timeout passes.
#pragma once

#include <cstdint>
#include <string_view>

#include "reckon/base/error.h"

namespace reckon::outbox {

// The broker's acknowledgment: the message is stored in a stream, at `stream_seq`.
struct PublishAck {
  std::int64_t stream_seq = 0;
  // The broker already held a message with this id (its duplicate window): nothing new was
  // stored, and `stream_seq` is the sequence of the first copy.
  bool duplicate = false;
};

class Publisher {
 public:
  virtual ~Publisher() = default;

  // Publishes `payload` to `subject` with `message_id` as its deduplication id (NATS header
  // Nats-Msg-Id). Success means the broker stored it durably. Errors: kUnavailable (no broker,
  // or no ack before the timeout: it may or may not be stored; publishing again with the same
  // id is safe), kFailedPrecondition (the broker refuses it, e.g. no stream takes the
  // subject: retrying helps only once an operator fixes that). The message is never lost by
  // a failure: the dispatcher retries it.
  virtual Result<PublishAck> Publish(std::string_view subject, std::string_view message_id,
                                     std::string_view payload) = 0;
};

}  // namespace reckon::outbox
