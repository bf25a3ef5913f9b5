#include "reckon/worker/call_secrets.h"

#include "reckon/contract/secret_fields.h"
#include "reckon/engine/tool_report.h"

namespace reckon {

CallSecrets::CallSecrets(const ToolContract& contract, const boost::json::value& input)
    : contract_(contract), values_(SecretValuesOf(input, contract.secret_fields)) {}

void CallSecrets::Add(std::string value) {
  if (!value.empty()) values_.push_back(std::move(value));
}

AttemptOutcome CallSecrets::Redact(AttemptOutcome report) const {
  return RedactReport(CallRedactor(contract_, nullptr, values_), std::move(report));
}

ReconcileOutcome CallSecrets::Redact(ReconcileOutcome report) const {
  return RedactReport(CallRedactor(contract_, nullptr, values_), std::move(report));
}

std::string CallSecrets::RedactDetails(std::string_view details_json) const {
  return RedactedHeartbeatDetails(CallRedactor(contract_, nullptr, values_), details_json);
}

}  // namespace reckon
