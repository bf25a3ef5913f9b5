#include "reckon/engine/tool_report.h"

#include "reckon/base/jcs.h"

namespace reckon {

SecretRedactor CallRedactor(const ToolContract& contract, const boost::json::value* input,
                            std::vector<std::string> fetched) {
  std::vector<std::string> values =
      input != nullptr ? SecretValuesOf(*input, contract.secret_fields) : std::vector<std::string>();
  for (std::string& value : fetched) values.push_back(std::move(value));
  return SecretRedactor(contract.secret_fields, std::move(values));
}

AttemptOutcome RedactReport(const SecretRedactor& redact, AttemptOutcome report) {
  if (!report.output.is_null()) report.output = redact.Output(report.output);
  report.provider_ref = redact.Text(std::move(report.provider_ref));
  report.code = redact.Text(std::move(report.code));
  report.message = redact.Text(std::move(report.message));
  report.heartbeat_details_json = RedactedHeartbeatDetails(redact, report.heartbeat_details_json);
  return report;
}

ReconcileOutcome RedactReport(const SecretRedactor& redact, ReconcileOutcome report) {
  if (!report.output.is_null()) report.output = redact.Output(report.output);
  report.provider_ref = redact.Text(std::move(report.provider_ref));
  report.message = redact.Text(std::move(report.message));
  return report;
}

std::string RedactedHeartbeatDetails(const SecretRedactor& redact, std::string_view raw) {
  if (raw.empty() || raw.size() > kMaxHeartbeatDetailsBytes) return "";
  auto parsed = ParseStrictJson(raw);
  if (!parsed) return "";
  auto canonical = CanonicalizeJson(redact.Output(parsed.value()));
  if (!canonical || canonical.value().size() > kMaxHeartbeatDetailsBytes) return "";
  return std::move(canonical).value();
}

}  // namespace reckon
