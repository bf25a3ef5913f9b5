// Keeping the values of secret fields out of the journal, whatever the source
// (docs/SECURITY.md, "Identifiers and secrets").
//
// A contract names its tool's secret fields (ToolContract::secret_fields, dotted input paths).
// Their values come from the worker's side: the tool fetches them (from a vault) when it runs.
// Reckon never needs them, so:
//
// - What comes from outside and is journaled whole may not carry a value for one. A workflow
//   input or a signal payload is refused (RefuseSecretValues) when, at any depth (inside arrays
//   too), an object holds a member at the path of a secret field of any contract the engine
//   knows: {"card_token": ...} anywhere, or {"card": {"number": ...}} for "card.number". The
//   names of secret fields are reserved for secrets: such a name refuses the input even where
//   the value is not one. (Agent plans get a sharper check, per step and tool: plan/plan.h.)
// - What a tool reports back (its output, provider reference, error code and message, heartbeat
//   details; a lookup's output, reference and message; an asynchronous completion) is redacted
//   whole by one function (engine/tool_report.h, RedactReport), and so is what a person writes
//   about an operation (a reason, a note, a resolution's reference): an output loses the
//   members at its tool's secret paths (a tool that echoes its input), and every string of the
//   output and every text loses each secret value of the call it contains ("[secret]" stands
//   in its place). The values are those of the call's input at its secret paths
//   (SecretValuesOf) and those the tool fetched itself and named to its worker
//   (ToolCallContext::KeepSecret; a tools file's secrets), each looked for as it is,
//   JSON-escaped (a message quoting a JSON body) and percent-encoded (one quoting a URL). A
//   text or string that is a secret value is replaced whatever its length; inside text, values
//   of at least kMinSubstringBytes are found anywhere, shorter ones (a CVV) are not, since they
//   would match innocent digits. The worker redacts before the report leaves it or is logged,
//   with every value it was shown; the engine again before journaling, with what it knows (the
//   paths, and the input's values while the input is in memory).
//
// Stateless and thread-safe.
#pragma once

#include <boost/json/value.hpp>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/contract/contract_registry.h"

namespace reckon {

inline constexpr std::string_view kSecretPlaceholder = "[secret]";
inline constexpr std::size_t kMinSubstringBytes = 8;

// Errc::kInvalidArgument if `value` carries a member at the path of a secret field of a
// contract in `contracts` (see above). `what` names the value in the message ("the input of
// workflow 'order-1'"), which names the tool and the field and says where secrets come from,
// and never quotes the value.
Result<void> RefuseSecretValues(const boost::json::value& value, const ContractRegistry& contracts,
                                std::string_view what);

// The values of the secret fields of a tool's full `input`, as RedactSecrets looks for them:
// each string at a secret path, each string inside an object or array at one, and any other
// scalar as its JSON text. Empty strings are left out.
std::vector<std::string> SecretValuesOf(const boost::json::value& input,
                                        std::span<const std::string> secret_fields);

// What redacts one call's reports (see above): the tool's `secret_fields` (the span must
// outlive the redactor) and the call's secret values. With no values (the input is not in
// memory) only the removal by path is left. Immutable; thread-safe.
class SecretRedactor {
 public:
  SecretRedactor() = default;
  SecretRedactor(std::span<const std::string> secret_fields, std::vector<std::string> values);

  // `output` without the members at the secret paths and with every secret value redacted in
  // each of its strings.
  boost::json::value Output(const boost::json::value& output) const;
  // `text` with every secret value it holds redacted.
  std::string Text(std::string text) const;
  // Whether it knows any value (else it only removes paths).
  bool has_values() const { return !forms_.empty(); }

 private:
  std::span<const std::string> secret_fields_;
  std::vector<std::string> forms_;  // each value as it is and escaped, longest first
};

}  // namespace reckon
