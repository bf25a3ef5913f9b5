#include "reckon/engine/outbox_message.h"

#include <boost/json.hpp>

#include "reckon/base/identifier.h"
#include "reckon/base/intent_hash.h"
#include "reckon/base/jcs.h"
#include "reckon/engine/operation_id.h"

namespace reckon {
namespace json = boost::json;

std::string MessageIdFor(const IdScope& scope, std::string_view step_id) {
  return "msg_" + StepDigest("reckon.outbox:", scope, step_id);
}

Result<std::string> EncodePublishMarker(std::string_view subject, std::string_view payload) {
  RECKON_TRY(ValidateSubject(subject));
  if (payload.size() > kMaxPayloadBytes) {
    return Err(Errc::kInvalidArgument,
               "the payload published to '" + std::string(subject) + "' has " +
                   std::to_string(payload.size()) + " bytes, over the limit of " +
                   std::to_string(kMaxPayloadBytes) + "; publish a reference to the data instead");
  }
  json::object value;
  value["subject"] = subject;
  value["payload"] = payload;
  std::string text = json::serialize(value);
  // The strict parser refuses what is not UTF-8: check it here, where the caller can still act.
  if (auto parsed = ParseStrictJson(text); !parsed) {
    return Err(Errc::kInvalidArgument, "the payload published to '" + std::string(subject) +
                                           "' is not valid UTF-8 text; encode binary data "
                                           "(base64) before publishing it");
  }
  return text;
}

Result<PublishValue> DecodePublishMarker(std::string_view value_json) {
  auto refuse = [] {
    return Err(Errc::kInvalidArgument,
               "a publish marker must be {\"subject\": text, \"payload\": text}");
  };
  auto parsed = ParseStrictJson(value_json);
  if (!parsed || !parsed.value().is_object()) return refuse();
  const json::object& object = parsed.value().as_object();
  const json::value* subject = object.if_contains("subject");
  const json::value* payload = object.if_contains("payload");
  if (subject == nullptr || payload == nullptr || !subject->is_string() ||
      !payload->is_string() || object.size() != 2) {
    return refuse();
  }
  PublishValue value{std::string(subject->as_string()), std::string(payload->as_string())};
  RECKON_TRY(ValidateSubject(value.subject));
  if (value.payload.size() > kMaxPayloadBytes) return refuse();
  return value;
}

}  // namespace reckon
