// JetStreamPull: a durable JetStream pull consumer with explicit acks, over libnats (Debian
// libnats-dev), as reckon-outbox-consumer uses it. The durable consumer (its name, the
// stream, the filter subject) lives in the broker's store: a consumer process that dies and
// comes back binds the same one and gets what was delivered and never acked again (after
// the consumer's ack wait), then the rest.
//
// Connection: the client connects in the background and reconnects on its own, forever
// (libnats retry-on-failed-connect), so a broker that is down when the program starts, or is
// killed and restarted later, only delays messages. Until it is reachable, Bind() and Fetch()
// fail with kUnavailable and the caller tries again.
//
// Ownership: owns its libnats connection, JetStream context and subscription; a PulledMessage
// owns its natsMsg. Not thread-safe: one consumer thread (libnats runs its own threads
// inside).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reckon/base/error.h"

struct __natsMsg;  // libnats's natsMsg

namespace reckon::samples {

struct JetStreamPullOptions {
  std::string url;      // nats://HOST:PORT
  std::string stream;   // an existing stream (the operator declares it)
  std::string subject;  // the consumer's filter subject, within the stream's subjects
  std::string durable;  // the durable consumer's name (created if absent; no '.')
  // How long the broker waits for an ack before it delivers a message again. Used only when
  // the durable consumer is created; an existing one keeps its own.
  std::chrono::milliseconds ack_wait{30000};
};

// One delivered message. Ack() or Term() it; dropping it unacked means redelivery after the
// ack wait.
class PulledMessage {
 public:
  explicit PulledMessage(__natsMsg* msg) : msg_(msg) {}
  PulledMessage(PulledMessage&& other) noexcept : msg_(std::exchange(other.msg_, nullptr)) {}
  PulledMessage& operator=(PulledMessage&&) = delete;
  PulledMessage(const PulledMessage&) = delete;
  ~PulledMessage();

  // The Nats-Msg-Id header (the outbox's message id); empty when absent.
  std::string message_id() const;
  std::string subject() const;
  std::string_view data() const;
  std::int64_t stream_seq() const;  // 0 if the metadata cannot be read
  std::int64_t delivered() const;   // how many times the broker delivered it, this included

  // Acknowledges and waits for the broker to confirm. kUnavailable if no confirmation came:
  // the broker may deliver the message again.
  Result<void> Ack();
  // Tells the broker never to deliver this message again (it cannot be processed).
  void Term();

 private:
  __natsMsg* msg_;
};

class JetStreamPull {
 public:
  // Starts connecting (in the background). kInvalidArgument for a URL libnats rejects.
  static Result<std::unique_ptr<JetStreamPull>> Connect(JetStreamPullOptions options);
  ~JetStreamPull();
  JetStreamPull(const JetStreamPull&) = delete;
  JetStreamPull& operator=(const JetStreamPull&) = delete;

  // Creates the durable consumer if the stream has none of that name, and subscribes to it.
  // kUnavailable: the broker is not reachable yet (try again); kFailedPrecondition: the
  // stream does not exist, or the broker refused the consumer (an operator must act).
  Result<void> Bind();
  bool bound() const;

  // Up to `batch` messages, waiting at most `wait`; empty when none came. kUnavailable while
  // the connection is down; any other error means Bind() again.
  Result<std::vector<PulledMessage>> Fetch(int batch, std::chrono::milliseconds wait);

 private:
  struct Handles;
  explicit JetStreamPull(JetStreamPullOptions options);

  JetStreamPullOptions options_;
  std::unique_ptr<Handles> handles_;
};

}  // namespace reckon::samples
