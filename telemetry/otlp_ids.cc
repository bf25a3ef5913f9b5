#include "reckon/telemetry/otlp_ids.h"

#include "reckon/base/intent_hash.h"

namespace reckon {
namespace {

// The first `bytes` bytes of SHA-256(tag NUL a NUL b NUL c) in hex; a zero id becomes ...01.
std::string HashId(std::string_view tag, std::string_view a, std::string_view b,
                   std::string_view c, std::size_t bytes) {
  std::string input;
  input.reserve(tag.size() + a.size() + b.size() + c.size() + 3);
  input.append(tag).push_back('\0');
  input.append(a).push_back('\0');
  input.append(b).push_back('\0');
  input.append(c);
  std::string hex = ToHex(Sha256(input)).substr(0, bytes * 2);
  if (hex.find_first_not_of('0') == std::string::npos) hex.back() = '1';
  return hex;
}

}  // namespace

std::string OtlpTraceId(std::string_view workflow_id, std::string_view run_id) {
  return HashId("reckon.trace", workflow_id, run_id, "", 16);
}

std::string OtlpRunSpanId(std::string_view workflow_id, std::string_view run_id) {
  return HashId("reckon.run", workflow_id, run_id, "", 8);
}

std::string OtlpOperationSpanId(std::string_view workflow_id, std::string_view run_id,
                                std::string_view operation_id) {
  return HashId("reckon.operation", workflow_id, run_id, operation_id, 8);
}

}  // namespace reckon
