#include "reckon/engine/heartbeat_details.h"

#include "reckon/base/jcs.h"
#include "reckon/engine/tool_dispatcher.h"

namespace reckon {

std::string RedactedHeartbeatDetails(const SecretRedactor& redact, std::string_view raw) {
  if (raw.empty() || raw.size() > kMaxHeartbeatDetailsBytes) return "";
  auto parsed = ParseStrictJson(raw);
  if (!parsed) return "";
  auto canonical = CanonicalizeJson(redact.Output(parsed.value()));
  if (!canonical || canonical.value().size() > kMaxHeartbeatDetailsBytes) return "";
  return std::move(canonical).value();
}

}  // namespace reckon
