#include "reckon/host/outbox_dispatch.h"

#include <utility>

#include "reckon/engine/outbox_message.h"
#include "reckon/storage/backend/open_backend.h"

namespace reckon {

Result<std::unique_ptr<OutboxDispatch>> OutboxDispatch::Start(
    const std::string& journal_path, const storage::PayloadCodec* codec,
    outbox::NatsPublisherOptions nats, outbox::DispatcherOptions options) {
  RECKON_TRY(auto store, storage::OpenOutboxStore(journal_path, codec));
  auto dispatcher = std::make_unique<outbox::Dispatcher>(
      std::move(store), std::make_unique<outbox::NatsPublisher>(std::move(nats)), options);
  dispatcher->Start();
  return std::unique_ptr<OutboxDispatch>(new OutboxDispatch(std::move(dispatcher)));
}

OutboxDispatch::~OutboxDispatch() { dispatcher_->Stop(); }

void OutboxDispatch::OnCommitted(const RunState&, std::span<const storage::Event> events) {
  for (const storage::Event& event : events) {
    const auto* marker = std::get_if<storage::MarkerRecorded>(&event.body);
    if (marker != nullptr && marker->kind == kPublishMarker) {
      dispatcher_->Notify();
      return;
    }
  }
}

}  // namespace reckon
