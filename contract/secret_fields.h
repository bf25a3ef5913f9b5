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
// - What a tool reports back is journaled after RedactSecrets: an output loses the members at
//   its tool's secret paths (a tool that echoes its input), and every string of the output and
//   every message (failure messages, notes, reasons) loses each secret value of the call's own
//   input it contains ("[secret]" stands in its place). Values of at least kMinSubstringBytes
//   are found anywhere inside a string; shorter ones (a CVV) only as a whole string value,
//   since inside text they would match innocent digits.
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

// A tool's report made safe to journal (see above). `secret_fields` are the tool's, `values`
// those of the call's input (SecretValuesOf; empty when the input is not in memory, which
// leaves only the removal by path).
struct SecretRedactor {
  std::span<const std::string> secret_fields;
  std::vector<std::string> values;

  boost::json::value Output(const boost::json::value& output) const;
  std::string Text(std::string text) const;
};

}  // namespace reckon
