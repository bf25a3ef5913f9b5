#include "reckon/outbox/nats_stream.h"

#include <nats/nats.h>

#include <algorithm>
#include <memory>
#include <set>

namespace reckon::outbox {
namespace {

std::string Why(natsStatus status, jsErrCode js_error) {
  std::string text = natsStatus_GetText(status);
  const char* last = nats_GetLastError(nullptr);
  if (last != nullptr && *last != '\0') text += std::string(" (") + last + ")";
  if (js_error != 0) text += ", JetStream error " + std::to_string(static_cast<int>(js_error));
  return text;
}

struct Client {
  natsConnection* conn = nullptr;
  jsCtx* js = nullptr;
  ~Client() {
    if (js != nullptr) jsCtx_Destroy(js);
    if (conn != nullptr) natsConnection_Destroy(conn);
  }
};

Result<std::unique_ptr<Client>> Open(const StreamSpec& spec) {
  natsOptions* opts = nullptr;
  if (natsOptions_Create(&opts) != NATS_OK) {
    return Err(Errc::kInternal, "libnats could not allocate connection options");
  }
  natsStatus status = natsOptions_SetURL(opts, spec.url.c_str());
  if (status == NATS_OK) status = natsOptions_SetTimeout(opts, spec.timeout.count());
  auto client = std::make_unique<Client>();
  if (status == NATS_OK) status = natsConnection_Connect(&client->conn, opts);
  natsOptions_Destroy(opts);
  if (status != NATS_OK) {
    return Err(Errc::kUnavailable, "cannot connect to NATS at '" + spec.url +
                                       "': " + Why(status, static_cast<jsErrCode>(0)) +
                                       "; is nats-server running there?");
  }
  jsOptions js_options;
  jsOptions_Init(&js_options);
  js_options.Wait = spec.timeout.count();
  status = natsConnection_JetStream(&client->js, client->conn, &js_options);
  if (status != NATS_OK) {
    return Err(Errc::kUnavailable,
               "cannot open JetStream at '" + spec.url + "': " + Why(status, static_cast<jsErrCode>(0)));
  }
  return client;
}

bool ValidName(const std::string& name) {
  return !name.empty() && name.size() <= 64 &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-';
         });
}

bool SameSubjects(const jsStreamConfig& config, const std::vector<std::string>& subjects) {
  std::set<std::string> have, want(subjects.begin(), subjects.end());
  for (int i = 0; i < config.SubjectsLen; ++i) have.insert(config.Subjects[i]);
  return have == want;
}

StreamState StateOf(const jsStreamInfo* info, StreamChange change) {
  StreamState state;
  state.change = change;
  state.messages = static_cast<std::int64_t>(info->State.Msgs);
  state.last_seq = static_cast<std::int64_t>(info->State.LastSeq);
  return state;
}

Result<StreamState> Refused(const StreamSpec& spec, const char* what, natsStatus status,
                            jsErrCode js_error) {
  const Errc code = status == NATS_TIMEOUT || status == NATS_CONNECTION_CLOSED
                        ? Errc::kUnavailable
                        : Errc::kFailedPrecondition;
  return Err(code, std::string(what) + " stream '" + spec.name + "' at '" + spec.url +
                       "': " + Why(status, js_error) +
                       (status == NATS_NO_RESPONDERS
                            ? "; is JetStream on (nats-server -js -sd DIR)?"
                            : std::string()));
}

}  // namespace

const char* StreamChangeName(StreamChange change) {
  switch (change) {
    case StreamChange::kCreated: return "created";
    case StreamChange::kUpdated: return "updated";
    case StreamChange::kUnchanged: return "unchanged";
  }
  return "?";
}

Result<StreamState> DeclareStream(const StreamSpec& spec) {
  if (!ValidName(spec.name)) {
    return Err(Errc::kInvalidArgument, "stream name '" + spec.name +
                                           "' is not valid: 1-64 of A-Z a-z 0-9 _ -");
  }
  if (spec.subjects.empty()) {
    return Err(Errc::kInvalidArgument, "stream '" + spec.name + "' needs at least one subject");
  }
  RECKON_TRY(std::unique_ptr<Client> client, Open(spec));
  std::vector<const char*> subjects;
  for (const std::string& s : spec.subjects) subjects.push_back(s.c_str());
  const std::int64_t window_ns = std::chrono::nanoseconds(spec.duplicate_window).count();

  jsStreamInfo* info = nullptr;
  jsErrCode js_error = static_cast<jsErrCode>(0);
  natsStatus status = js_GetStreamInfo(&info, client->js, spec.name.c_str(), nullptr, &js_error);
  const bool missing = status == NATS_NOT_FOUND || js_error == JSStreamNotFoundErr;
  if (status != NATS_OK && !missing) return Refused(spec, "reading", status, js_error);

  if (missing) {
    jsStreamConfig config;
    jsStreamConfig_Init(&config);
    config.Name = spec.name.c_str();
    config.Subjects = subjects.data();
    config.SubjectsLen = static_cast<int>(subjects.size());
    config.Storage = js_FileStorage;
    config.Duplicates = window_ns;
    js_error = static_cast<jsErrCode>(0);
    status = js_AddStream(&info, client->js, &config, nullptr, &js_error);
    if (status != NATS_OK) return Refused(spec, "creating", status, js_error);
    StreamState state = StateOf(info, StreamChange::kCreated);
    jsStreamInfo_Destroy(info);
    return state;
  }

  std::unique_ptr<jsStreamInfo, decltype(&jsStreamInfo_Destroy)> held(info, jsStreamInfo_Destroy);
  jsStreamConfig& existing = *info->Config;
  if (SameSubjects(existing, spec.subjects) && existing.Duplicates == window_ns) {
    return StateOf(info, StreamChange::kUnchanged);
  }
  jsStreamConfig config = existing;  // keep retention, limits and storage as they are
  config.Subjects = subjects.data();
  config.SubjectsLen = static_cast<int>(subjects.size());
  config.Duplicates = window_ns;
  jsStreamInfo* updated = nullptr;
  js_error = static_cast<jsErrCode>(0);
  status = js_UpdateStream(&updated, client->js, &config, nullptr, &js_error);
  if (status != NATS_OK) return Refused(spec, "updating", status, js_error);
  StreamState state = StateOf(updated, StreamChange::kUpdated);
  jsStreamInfo_Destroy(updated);
  return state;
}

}  // namespace reckon::outbox
