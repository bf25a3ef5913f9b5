#include "reckon/outbox/nats_publisher.h"

#include <nats/nats.h>

#include <string>
#include <utility>

namespace reckon::outbox {
namespace {

std::string StatusText(natsStatus status) {
  const char* last = nats_GetLastError(nullptr);
  std::string text = natsStatus_GetText(status);
  if (last != nullptr && *last != '\0') text += std::string(" (") + last + ")";
  return text;
}

}  // namespace

struct NatsPublisher::Connection {
  natsConnection* conn = nullptr;
  jsCtx* js = nullptr;
  ~Connection() {
    if (js != nullptr) jsCtx_Destroy(js);
    if (conn != nullptr) natsConnection_Destroy(conn);
  }
};

NatsPublisher::NatsPublisher(NatsPublisherOptions options) : options_(std::move(options)) {}

NatsPublisher::~NatsPublisher() = default;

Result<void> NatsPublisher::Connect() {
  natsOptions* opts = nullptr;
  if (natsOptions_Create(&opts) != NATS_OK) {
    return Err(Errc::kInternal, "libnats could not allocate connection options");
  }
  natsStatus status = natsOptions_SetURL(opts, options_.url.c_str());
  if (status == NATS_OK) status = natsOptions_SetTimeout(opts, options_.connect_timeout.count());
  if (status == NATS_OK) status = natsOptions_SetMaxReconnect(opts, -1);  // forever
  if (status == NATS_OK) status = natsOptions_SetReconnectWait(opts, 250);
  auto connection = std::make_unique<Connection>();
  if (status == NATS_OK) status = natsConnection_Connect(&connection->conn, opts);
  natsOptions_Destroy(opts);
  if (status != NATS_OK) {
    return Err(Errc::kUnavailable, "cannot connect to NATS at '" + options_.url +
                                       "': " + StatusText(status) +
                                       "; the outbox keeps the messages and retries");
  }
  status = natsConnection_JetStream(&connection->js, connection->conn, nullptr);
  if (status != NATS_OK) {
    return Err(Errc::kUnavailable, "cannot open JetStream at '" + options_.url +
                                       "': " + StatusText(status));
  }
  connection_ = std::move(connection);
  return Ok();
}

Result<PublishAck> NatsPublisher::Publish(std::string_view subject, std::string_view message_id,
                                          std::string_view payload) {
  if (connection_ == nullptr) {
    RECKON_TRY(Connect());
  }
  const std::string subject_text(subject), id_text(message_id);
  natsMsg* msg = nullptr;
  natsStatus status = natsMsg_Create(&msg, subject_text.c_str(), nullptr, payload.data(),
                                     static_cast<int>(payload.size()));
  if (status == NATS_OK) status = natsMsgHeader_Set(msg, "Nats-Msg-Id", id_text.c_str());
  if (status != NATS_OK) {
    natsMsg_Destroy(msg);
    return Err(Errc::kInternal, "libnats could not build message '" + id_text +
                                    "': " + StatusText(status));
  }
  jsPubOptions pub_options;
  jsPubOptions_Init(&pub_options);
  pub_options.MaxWait = options_.ack_timeout.count();
  jsPubAck* ack = nullptr;
  jsErrCode js_error = static_cast<jsErrCode>(0);
  status = js_PublishMsg(&ack, connection_->js, msg, &pub_options, &js_error);
  natsMsg_Destroy(msg);
  if (status == NATS_OK && ack != nullptr) {
    PublishAck result{static_cast<std::int64_t>(ack->Sequence), ack->Duplicate};
    jsPubAck_Destroy(ack);
    return result;
  }
  if (ack != nullptr) jsPubAck_Destroy(ack);
  if (status == NATS_NO_RESPONDERS) {
    return Err(Errc::kFailedPrecondition,
               "no JetStream stream takes subject '" + subject_text + "' at '" + options_.url +
                   "'; create a stream for it (the message stays in the outbox)");
  }
  std::string why = StatusText(status);
  if (js_error != 0) why += ", JetStream error " + std::to_string(static_cast<int>(js_error));
  // Start the next attempt on a new connection. libnats reconnects a dropped connection by
  // itself, but a connection whose requests time out while the broker is up was seen to stay
  // that way (every retry of two messages timed out for a minute in one demo run, not
  // reproduced since); a new connection costs little next to the ack timeout.
  if (status == NATS_TIMEOUT) connection_.reset();
  return Err(Errc::kUnavailable, "publishing message '" + id_text + "' to '" + subject_text +
                                     "' got no ack: " + why + "; it will be published again");
}

}  // namespace reckon::outbox
