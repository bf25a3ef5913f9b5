#include "reckon/protocol/wire_json.h"

#include <boost/json/parse.hpp>
#include <capnp/compat/json.h>
#include <capnp/serialize.h>
#include <kj/array.h>

#include <cstring>

#include "reckon/protocol/wire_convert.h"
#include "reckon/storage/events.capnp.h"

namespace reckon::api {
namespace json = boost::json;

json::object SummaryJson(wire::WorkflowSummary::Reader s) {
  return json::object{{"workflow_id", Str(s.getWorkflowId())},
                      {"run_id", Str(s.getRunId())},
                      {"workflow_type", Str(s.getWorkflowType())},
                      {"status", Str(s.getStatus())},
                      {"stuck_reason", Str(s.getStuckReason())},
                      {"created_at_us", s.getCreatedAtUs()},
                      {"updated_at_us", s.getUpdatedAtUs()},
                      {"operations", s.getOperations()},
                      {"committed_operations", s.getCommittedOperations()},
                      {"waiting_for_person", s.getWaitingForPerson()},
                      {"waits_on", Str(s.getWaitsOn())},
                      {"wait_detail", Str(s.getWaitDetail())},
                      {"wait_until_us", s.getWaitUntilUs()}};
}

json::object OperationJson(wire::OperationInfo::Reader o) {
  return json::object{{"operation_id", Str(o.getOperationId())},
                      {"step_id", Str(o.getStepId())},
                      {"tool", Str(o.getTool())},
                      {"side_effect", Str(o.getSideEffect())},
                      {"state", Str(o.getState())},
                      {"attempt", o.getAttempt()},
                      {"intent_hash", Str(o.getIntentHash())},
                      {"contract_hash", Str(o.getContractHash())},
                      {"provider_ref", Str(o.getProviderRef())},
                      {"approval_id", Str(o.getApprovalId())},
                      {"approval_deadline_us", o.getApprovalDeadlineUs()},
                      {"failure_code", Str(o.getFailureCode())},
                      {"failure_message", Str(o.getFailureMessage())},
                      {"input", ParsedJsonField(Str(o.getRedactedInputJson()))}};
}

Result<std::string> EventPayloadJson(capnp::Data::Reader payload) {
  if (payload.size() % sizeof(capnp::word) != 0 || payload.size() == 0) {
    return Err(Errc::kCorruption, "event payload is not whole words");
  }
  // Copied into word-aligned memory: Cap'n Proto reads in place and refuses unaligned input.
  auto words = kj::heapArray<capnp::word>(payload.size() / sizeof(capnp::word));
  std::memcpy(words.begin(), payload.begin(), payload.size());
  capnp::FlatArrayMessageReader reader(words);
  capnp::JsonCodec codec;
  kj::String text = codec.encode(reader.getRoot<storage::wire::EventPayload>());
  return std::string(text.cStr());
}

Result<json::value> EventFieldsJson(capnp::Data::Reader payload) {
  RECKON_TRY(std::string text, EventPayloadJson(payload));
  boost::system::error_code ec;
  json::value parsed = json::parse(text, ec);
  if (ec || !parsed.is_object()) return Err(Errc::kInternal, "an event did not encode as JSON");
  if (parsed.as_object().empty()) return json::value(json::object());
  return parsed.as_object().begin()->value();
}

json::value ParsedJsonField(std::string_view text) {
  if (text.empty()) return nullptr;
  boost::system::error_code ec;
  json::value parsed = json::parse(text, ec);
  if (ec) return json::value(json::string(text));
  return parsed;
}

}  // namespace reckon::api
