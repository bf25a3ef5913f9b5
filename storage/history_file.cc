#include "reckon/storage/history_file.h"

#include <boost/json.hpp>
#include <capnp/compat/json.h>
#include <capnp/serialize.h>
#include <kj/array.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "reckon/base/base64.h"
#include "reckon/storage/event_codec.h"
#include "reckon/storage/events.capnp.h"

namespace reckon::storage {
namespace {

namespace json = boost::json;

Error Bad(std::string message) {
  return Err(Errc::kInvalidArgument, "history: " + std::move(message));
}

std::string SeqText(std::size_t index) { return "events[" + std::to_string(index) + "]"; }

// The event as people read it: the fields of its EventPayload in Cap'n Proto's JSON mapping
// (the shape `reckon history --json` prints). `bytes` come from EncodeEventBody.
json::value ReadableEvent(const std::string& bytes) {
  auto words = kj::heapArray<capnp::word>(bytes.size() / sizeof(capnp::word));
  std::memcpy(words.begin(), bytes.data(), words.size() * sizeof(capnp::word));
  capnp::FlatArrayMessageReader reader(words);
  capnp::JsonCodec codec;
  kj::String text = codec.encode(reader.getRoot<wire::EventPayload>());
  boost::system::error_code ec;
  json::value parsed = json::parse(std::string_view(text.cStr(), text.size()), ec);
  if (ec || !parsed.is_object() || parsed.as_object().empty()) return json::object();
  return parsed.as_object().begin()->value();
}

Result<std::int64_t> IntegerField(const json::object& object, std::string_view key,
                                  const std::string& where) {
  const json::value* value = object.if_contains(key);
  if (value == nullptr) return Bad(where + ": \"" + std::string(key) + "\" is missing");
  if (value->is_int64()) return value->as_int64();
  if (value->is_uint64() &&
      value->as_uint64() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return static_cast<std::int64_t>(value->as_uint64());
  }
  return Bad(where + ": \"" + std::string(key) + "\" must be an integer");
}

Result<std::string> StringField(const json::object& object, std::string_view key,
                                const std::string& where) {
  const json::value* value = object.if_contains(key);
  if (value == nullptr) return Bad(where + "\"" + std::string(key) + "\" is missing");
  if (!value->is_string()) return Bad(where + "\"" + std::string(key) + "\" must be a string");
  return std::string(value->as_string());
}

Result<void> CheckFormat(const json::object& root) {
  RECKON_TRY(std::string format, StringField(root, "format", ""));
  if (format == kHistoryFormat) return Ok();
  if (format.rfind("reckon-history/", 0) == 0) {
    return Bad("\"format\" is '" + format + "', which this release cannot read (it reads '" +
               std::string(kHistoryFormat) + "'); replay it with the release that exported it, "
               "or export the history again");
  }
  return Bad("\"format\" is '" + format + "', not '" + std::string(kHistoryFormat) +
             "': this is not a Reckon history file");
}

Result<Event> ParseEvent(const json::value& value, std::size_t index, EventDecoder& decoder) {
  const std::string where = SeqText(index);
  if (!value.is_object()) return Bad(where + " is not an object");
  const json::object& object = value.as_object();
  RECKON_TRY(std::int64_t seq, IntegerField(object, "seq", where));
  RECKON_TRY(std::int64_t recorded_at_us, IntegerField(object, "recorded_at_us", where));
  const std::string at = where + " (seq " + std::to_string(seq) + "): ";
  RECKON_TRY(std::string type, StringField(object, "type", at));
  RECKON_TRY(std::string payload_text, StringField(object, "payload", at));
  auto payload = DecodeBase64(payload_text);
  if (!payload) return Bad(at + "\"payload\" is not base64: " + payload.error().message());
  const std::string& bytes = payload.value();
  auto body = decoder.Decode(std::as_bytes(std::span(bytes.data(), bytes.size())));
  if (!body) {
    return Bad(at + "\"payload\" is not an EventPayload this release can decode (" +
               body.error().message() + ")");
  }
  if (type != EventTypeName(body.value())) {
    return Bad(at + "\"type\" is '" + type + "' but the payload is " +
               std::string(EventTypeName(body.value())));
  }
  return Event{seq, recorded_at_us, std::move(body).value()};
}

}  // namespace

Result<void> CheckHistory(const HistoryFile& history) {
  if (history.workflow_id.empty()) return Bad("\"workflow_id\" is empty");
  if (history.run_id.empty()) return Bad("\"run_id\" is empty");
  if (history.workflow_type.empty()) return Bad("\"workflow_type\" is empty");
  if (history.events.empty()) return Bad("\"events\" is empty; a run begins with WorkflowStarted");
  for (std::size_t i = 0; i < history.events.size(); ++i) {
    const std::int64_t want = static_cast<std::int64_t>(i) + 1;
    if (history.events[i].seq != want) {
      return Bad(SeqText(i) + " has seq " + std::to_string(history.events[i].seq) + " where " +
                 std::to_string(want) +
                 " belongs: seqs must run 1, 2, 3... without a gap (a missing or reordered "
                 "event; export the history again)");
    }
  }
  const auto* started = std::get_if<WorkflowStarted>(&history.events.front().body);
  if (started == nullptr) {
    return Bad("the first event is " + std::string(EventTypeName(history.events.front().body)) +
               ", not WorkflowStarted");
  }
  if (started->workflow_type != history.workflow_type) {
    return Bad("\"workflow_type\" is '" + history.workflow_type +
               "' but the run's WorkflowStarted says '" + started->workflow_type + "'");
  }
  return Ok();
}

Result<std::string> FormatHistory(const HistoryFile& history) {
  RECKON_TRY(CheckHistory(history));
  std::string text = "{\"format\": " + json::serialize(json::string(kHistoryFormat)) +
                     ",\n \"workflow_id\": " + json::serialize(json::string(history.workflow_id)) +
                     ",\n \"run_id\": " + json::serialize(json::string(history.run_id)) +
                     ",\n \"workflow_type\": " +
                     json::serialize(json::string(history.workflow_type)) + ",\n \"events\": [\n";
  for (std::size_t i = 0; i < history.events.size(); ++i) {
    const Event& event = history.events[i];
    const std::string bytes = EncodeEventBody(event.body);
    json::object line;
    line["seq"] = event.seq;
    line["recorded_at_us"] = event.recorded_at_us;
    line["type"] = EventTypeName(event.body);
    line["payload"] = EncodeBase64(bytes);
    line["event"] = ReadableEvent(bytes);
    text += "  " + json::serialize(line) + (i + 1 < history.events.size() ? ",\n" : "\n");
  }
  text += " ]}\n";
  return text;
}

Result<HistoryFile> ParseHistory(std::string_view text) {
  if (text.size() > kMaxHistoryFileBytes) {
    return Bad("the file has " + std::to_string(text.size()) + " bytes, over the limit of " +
               std::to_string(kMaxHistoryFileBytes));
  }
  boost::system::error_code ec;
  json::value parsed = json::parse(text, ec);
  if (ec) return Bad("not JSON: " + ec.message());
  if (!parsed.is_object()) return Bad("the document is not a JSON object");
  const json::object& root = parsed.as_object();
  RECKON_TRY(CheckFormat(root));
  HistoryFile history;
  RECKON_TRY(history.workflow_id, StringField(root, "workflow_id", ""));
  RECKON_TRY(history.run_id, StringField(root, "run_id", ""));
  RECKON_TRY(history.workflow_type, StringField(root, "workflow_type", ""));
  const json::value* events = root.if_contains("events");
  if (events == nullptr || !events->is_array()) return Bad("\"events\" must be an array");
  EventDecoder decoder;
  history.events.reserve(events->as_array().size());
  for (std::size_t i = 0; i < events->as_array().size(); ++i) {
    RECKON_TRY(Event event, ParseEvent(events->as_array()[i], i, decoder));
    history.events.push_back(std::move(event));
  }
  RECKON_TRY(CheckHistory(history));
  return history;
}

Result<void> WriteHistoryFile(const std::string& path, const HistoryFile& history) {
  RECKON_TRY(std::string text, FormatHistory(history));
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out || !(out << text).flush()) {
      return Err(Errc::kUnavailable, "cannot write the history file '" + temporary +
                                         "': " + std::strerror(errno));
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    std::remove(temporary.c_str());
    return Err(Errc::kUnavailable, "cannot move the history file into place at '" + path +
                                       "': " + std::strerror(error));
  }
  return Ok();
}

Result<HistoryFile> ReadHistoryFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Err(errno == ENOENT ? Errc::kNotFound : Errc::kUnavailable,
               "cannot read the history file '" + path + "': " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  auto history = ParseHistory(text.str());
  if (!history) return history.error().WithContext(path);
  return history;
}

Result<HistoryFile> ReadLatestHistory(Journal& journal, const std::string& workflow_id) {
  RECKON_TRY(std::optional<RunRow> row, journal.FindLatestRun(workflow_id));
  if (!row) return Err(Errc::kNotFound, "no workflow '" + workflow_id + "' in the journal");
  RECKON_TRY(std::vector<Event> events, journal.ReadEvents(row->ref));
  return HistoryFile{workflow_id, row->ref.run_id, row->workflow_type, std::move(events)};
}

Result<HistoryFile> ReadRunHistory(Journal& journal, const RunRef& run) {
  RECKON_TRY(std::optional<RunRow> row, journal.FindRun(run));
  if (!row) {
    return Err(Errc::kNotFound, "workflow '" + run.workflow_id + "' has no run '" + run.run_id +
                                    "' in the journal");
  }
  RECKON_TRY(std::vector<Event> events, journal.ReadEvents(row->ref));
  return HistoryFile{run.workflow_id, row->ref.run_id, row->workflow_type, std::move(events)};
}

}  // namespace reckon::storage
