// NatsPublisher: the Publisher (outbox/publisher.h) for NATS JetStream, over libnats (Debian
// libnats-dev). Each message goes out with the header Nats-Msg-Id = its message id, so the
// stream drops a second copy inside its duplicate window, and waits for the stream's ack.
//
// It does not create streams: a stream that takes the subjects is the operator's (or the
// test's) to declare, with its duplicate window; a subject no stream takes fails with
// kFailedPrecondition saying so. It connects on the first publish and reconnects on its own
// (libnats), so a broker that is down at start or restarts later only delays delivery. After
// a publish whose ack timed out, the next publish opens a new connection.
//
// Threading: one owner thread (the dispatcher's). Owns its libnats connection.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "reckon/outbox/publisher.h"

namespace reckon::outbox {

struct NatsPublisherOptions {
  std::string url;  // nats://host:port
  std::chrono::milliseconds connect_timeout{2000};
  // How long one publish waits for the stream's ack before it counts as unknown (kUnavailable).
  std::chrono::milliseconds ack_timeout{5000};
};

class NatsPublisher final : public Publisher {
 public:
  explicit NatsPublisher(NatsPublisherOptions options);
  ~NatsPublisher() override;
  NatsPublisher(const NatsPublisher&) = delete;
  NatsPublisher& operator=(const NatsPublisher&) = delete;

  Result<PublishAck> Publish(std::string_view subject, std::string_view message_id,
                             std::string_view payload) override;

 private:
  struct Connection;
  Result<void> Connect();

  NatsPublisherOptions options_;
  std::unique_ptr<Connection> connection_;  // null until connected
};

}  // namespace reckon::outbox
