#include "samples/outbox_consumer/jetstream_pull.h"

#include <nats/nats.h>

#include <utility>

namespace reckon::samples {
namespace {

std::string NatsText(natsStatus status, jsErrCode js_error = static_cast<jsErrCode>(0)) {
  std::string text = natsStatus_GetText(status);
  const char* last = nats_GetLastError(nullptr);
  if (last != nullptr && *last != '\0') text += std::string(" (") + last + ")";
  if (js_error != 0) text += ", JetStream error " + std::to_string(static_cast<int>(js_error));
  return text;
}

// Statuses that mean "no broker right now": the client is reconnecting, or a request found
// nobody to answer it (JetStream not up yet).
bool Transient(natsStatus status) {
  return status == NATS_NOT_YET_CONNECTED || status == NATS_CONNECTION_DISCONNECTED ||
         status == NATS_CONNECTION_CLOSED || status == NATS_NO_SERVER ||
         status == NATS_TIMEOUT || status == NATS_NO_RESPONDERS || status == NATS_IO_ERROR ||
         status == NATS_STALE_CONNECTION;
}

// Given to libnats so that a connect that fails at first returns at once (NATS_NOT_YET_CONNECTED)
// and goes on in the background; the loop notices the connection by its calls succeeding.
void OnConnected(natsConnection*, void*) {}

}  // namespace

struct JetStreamPull::Handles {
  natsConnection* conn = nullptr;
  jsCtx* js = nullptr;
  natsSubscription* sub = nullptr;
  ~Handles() {
    if (sub != nullptr) natsSubscription_Destroy(sub);  // keeps the durable consumer
    if (js != nullptr) jsCtx_Destroy(js);
    if (conn != nullptr) natsConnection_Destroy(conn);
  }
};

// --- PulledMessage ---------------------------------------------------------------------------

PulledMessage::~PulledMessage() {
  if (msg_ != nullptr) natsMsg_Destroy(msg_);
}

std::string PulledMessage::message_id() const {
  const char* id = nullptr;
  if (natsMsgHeader_Get(msg_, "Nats-Msg-Id", &id) != NATS_OK || id == nullptr) return "";
  return id;
}

std::string PulledMessage::subject() const { return natsMsg_GetSubject(msg_); }

std::string_view PulledMessage::data() const {
  return {natsMsg_GetData(msg_), static_cast<std::size_t>(natsMsg_GetDataLength(msg_))};
}

std::int64_t PulledMessage::stream_seq() const {
  jsMsgMetaData* meta = nullptr;
  if (natsMsg_GetMetaData(&meta, msg_) != NATS_OK) return 0;
  const auto seq = static_cast<std::int64_t>(meta->Sequence.Stream);
  jsMsgMetaData_Destroy(meta);
  return seq;
}

std::int64_t PulledMessage::delivered() const {
  jsMsgMetaData* meta = nullptr;
  if (natsMsg_GetMetaData(&meta, msg_) != NATS_OK) return 0;
  const auto count = static_cast<std::int64_t>(meta->NumDelivered);
  jsMsgMetaData_Destroy(meta);
  return count;
}

Result<void> PulledMessage::Ack() {
  jsErrCode js_error = static_cast<jsErrCode>(0);
  natsStatus status = natsMsg_AckSync(msg_, nullptr, &js_error);
  if (status != NATS_OK) {
    return Err(Errc::kUnavailable, "ack not confirmed: " + NatsText(status, js_error));
  }
  return Ok();
}

void PulledMessage::Term() { (void)natsMsg_Term(msg_, nullptr); }

// --- JetStreamPull ---------------------------------------------------------------------------

JetStreamPull::JetStreamPull(JetStreamPullOptions options)
    : options_(std::move(options)), handles_(std::make_unique<Handles>()) {}

JetStreamPull::~JetStreamPull() = default;

Result<std::unique_ptr<JetStreamPull>> JetStreamPull::Connect(JetStreamPullOptions options) {
  std::unique_ptr<JetStreamPull> pull(new JetStreamPull(std::move(options)));
  natsOptions* opts = nullptr;
  if (natsOptions_Create(&opts) != NATS_OK) {
    return Err(Errc::kInternal, "libnats could not allocate connection options");
  }
  natsStatus s = natsOptions_SetURL(opts, pull->options_.url.c_str());
  if (s == NATS_OK) s = natsOptions_SetTimeout(opts, 2000);
  if (s == NATS_OK) s = natsOptions_SetMaxReconnect(opts, -1);  // forever
  if (s == NATS_OK) s = natsOptions_SetReconnectWait(opts, 250);
  if (s == NATS_OK) s = natsOptions_SetRetryOnFailedConnect(opts, true, OnConnected, nullptr);
  if (s == NATS_OK) s = natsConnection_Connect(&pull->handles_->conn, opts);
  natsOptions_Destroy(opts);
  if (s != NATS_OK && s != NATS_NOT_YET_CONNECTED) {
    return Err(Errc::kInvalidArgument,
               "cannot use NATS url '" + pull->options_.url + "': " + NatsText(s) +
                   "; expected nats://HOST:PORT");
  }
  s = natsConnection_JetStream(&pull->handles_->js, pull->handles_->conn, nullptr);
  if (s != NATS_OK) return Err(Errc::kInternal, "cannot open JetStream: " + NatsText(s));
  return pull;
}

bool JetStreamPull::bound() const { return handles_->sub != nullptr; }

Result<void> JetStreamPull::Bind() {
  if (bound()) return Ok();
  if (natsConnection_Status(handles_->conn) != NATS_CONN_STATUS_CONNECTED) {
    // A request now would wait in the reconnect buffer until its timeout.
    return Err(Errc::kUnavailable, "NATS at " + options_.url + " not reachable yet");
  }
  const char* stream = options_.stream.c_str();
  const char* durable = options_.durable.c_str();
  jsConsumerInfo* info = nullptr;
  jsErrCode js_error = static_cast<jsErrCode>(0);
  natsStatus s = js_GetConsumerInfo(&info, handles_->js, stream, durable, nullptr, &js_error);
  if (info != nullptr) jsConsumerInfo_Destroy(info);
  if (s != NATS_OK && js_error == JSConsumerNotFoundErr) {
    jsConsumerConfig config;
    jsConsumerConfig_Init(&config);
    config.Durable = durable;
    config.AckPolicy = js_AckExplicit;
    config.DeliverPolicy = js_DeliverAll;
    config.FilterSubject = options_.subject.c_str();
    config.AckWait = std::chrono::nanoseconds(options_.ack_wait).count();
    js_error = static_cast<jsErrCode>(0);
    s = js_AddConsumer(&info, handles_->js, stream, &config, nullptr, &js_error);
    if (info != nullptr) jsConsumerInfo_Destroy(info);
  }
  if (s != NATS_OK) {
    if (js_error == JSStreamNotFoundErr) {
      return Err(Errc::kFailedPrecondition,
                 "no stream '" + options_.stream + "' at " + options_.url +
                     "; declare it first (the outbox does not create streams)");
    }
    if (Transient(s) && js_error == 0) {
      return Err(Errc::kUnavailable, "NATS at " + options_.url + " not reachable: " + NatsText(s));
    }
    return Err(Errc::kFailedPrecondition, "the broker refused consumer '" + options_.durable +
                                              "' on stream '" + options_.stream +
                                              "': " + NatsText(s, js_error));
  }
  jsSubOptions sub_options;
  jsSubOptions_Init(&sub_options);
  sub_options.Stream = stream;
  sub_options.Consumer = durable;
  js_error = static_cast<jsErrCode>(0);
  s = js_PullSubscribe(&handles_->sub, handles_->js, options_.subject.c_str(), durable, nullptr,
                       &sub_options, &js_error);
  if (s != NATS_OK) {
    handles_->sub = nullptr;
    const Errc code = Transient(s) && js_error == 0 ? Errc::kUnavailable : Errc::kFailedPrecondition;
    return Err(code, "cannot bind consumer '" + options_.durable + "' of stream '" +
                         options_.stream + "' (subject '" + options_.subject +
                         "'): " + NatsText(s, js_error));
  }
  return Ok();
}

Result<std::vector<PulledMessage>> JetStreamPull::Fetch(int batch,
                                                        std::chrono::milliseconds wait) {
  if (!bound()) return Err(Errc::kFailedPrecondition, "not bound: call Bind() first");
  natsMsgList list{};
  jsErrCode js_error = static_cast<jsErrCode>(0);
  natsStatus s = natsSubscription_Fetch(&list, handles_->sub, batch, wait.count(), &js_error);
  std::vector<PulledMessage> out;
  for (int i = 0; i < list.Count; ++i) {
    out.emplace_back(list.Msgs[i]);
    list.Msgs[i] = nullptr;  // owned by `out` now
  }
  natsMsgList_Destroy(&list);
  if (s == NATS_OK || (s == NATS_TIMEOUT && js_error == 0)) return out;
  if (!out.empty()) return out;
  if (Transient(s) && js_error == 0) {
    return Err(Errc::kUnavailable, "fetching from NATS at " + options_.url + ": " + NatsText(s));
  }
  // Anything else (the consumer was deleted, the subscription is closed): bind again.
  natsSubscription_Destroy(handles_->sub);
  handles_->sub = nullptr;
  return Err(Errc::kFailedPrecondition, "fetching from consumer '" + options_.durable +
                                            "': " + NatsText(s, js_error) + "; binding again");
}

}  // namespace reckon::samples
