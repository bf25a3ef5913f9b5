// DeclareStream: makes sure a NATS JetStream stream exists that stores the outbox's subjects,
// with the duplicate window the outbox relies on. The dispatcher never creates streams (which
// subjects are kept, for how long and on what storage is the operator's decision), so this is
// for operators and demos: `reckon outbox stream NAME --nats-url URL --subjects 'refunds.>'`.
//
// Declaring is idempotent: a missing stream is created (file storage); an existing one whose
// subjects or duplicate window differ is updated to these (its other settings are kept); one
// that matches is left alone. The duplicate window is how long the broker remembers a
// Nats-Msg-Id: a copy the dispatcher republishes within it (after a crash between the ack and
// its record) is dropped by the broker; beyond it, by the consumer (samples/outbox_consumer).
//
// Blocking; one call opens and closes its own connection. Thread-safe (no shared state).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "reckon/base/error.h"

namespace reckon::outbox {

struct StreamSpec {
  std::string url;                    // nats://host:port
  std::string name;                   // the stream's name: A-Z a-z 0-9 _ -
  std::vector<std::string> subjects;  // subjects or wildcards it stores ("refunds.>")
  std::chrono::milliseconds duplicate_window{std::chrono::minutes(2)};
  std::chrono::milliseconds timeout{5000};  // connect and each request
};

enum class StreamChange { kCreated, kUpdated, kUnchanged };

struct StreamState {
  StreamChange change = StreamChange::kUnchanged;
  std::int64_t messages = 0;
  std::int64_t last_seq = 0;
};

// Errors: kInvalidArgument (no name or subjects, or a name with other characters), kUnavailable
// (no broker at `url`, or no answer within the timeout: retry), kFailedPrecondition (the broker
// refuses the stream, e.g. JetStream is off or the subjects overlap another stream's; the
// message says what the broker said).
Result<StreamState> DeclareStream(const StreamSpec& spec);

const char* StreamChangeName(StreamChange change);

}  // namespace reckon::outbox
