// OutboxDispatch: the outbox dispatcher (outbox/dispatcher.h) as a host runs it, beside its
// engine: a connection of its own on the journal file, a NatsPublisher, the dispatcher's
// thread, and a TraceSink that wakes the dispatcher when a commit carries a publish, so a
// message leaves without waiting for the idle poll. Built by the composition roots
// (EmbeddedHost with EmbeddedHostOptions::nats_url; ServerHost) after the journal is open.
//
// The engine only calls OnCommitted, which takes the dispatcher's mutex for a moment and never
// waits on the broker. Ownership: owns the dispatcher; the codec is borrowed and must outlive
// it. Remove the sink from the engine before destroying this.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "reckon/engine/trace_sink.h"
#include "reckon/outbox/dispatcher.h"
#include "reckon/outbox/nats_publisher.h"
#include "reckon/storage/payload_codec.h"

namespace reckon {

class OutboxDispatch final : public TraceSink {
 public:
  // Opens the outbox store on `journal_path` (the journal must be open already: its owner
  // applied the migrations) and starts the dispatcher. Errors: the store's (naming the file).
  static Result<std::unique_ptr<OutboxDispatch>> Start(const std::string& journal_path,
                                                       const storage::PayloadCodec* codec,
                                                       outbox::NatsPublisherOptions nats,
                                                       outbox::DispatcherOptions options = {});
  ~OutboxDispatch() override;  // stops the dispatcher's thread

  void OnCommitted(const RunState& run, std::span<const storage::Event> events) override;

  outbox::Dispatcher& dispatcher() { return *dispatcher_; }

 private:
  explicit OutboxDispatch(std::unique_ptr<outbox::Dispatcher> dispatcher)
      : dispatcher_(std::move(dispatcher)) {}

  std::unique_ptr<outbox::Dispatcher> dispatcher_;
};

}  // namespace reckon
