// Identifiers and short texts that come from outside (a client, a worker, a plan, a program
// calling the embedded engine) and reach logs, tables and the journal: their rules, and the one
// check every entrance applies before anything is journaled (docs/SECURITY.md, "Identifiers
// and secrets").
//
// The rules (bytes, since identifiers are ASCII):
//
//   kind             length   characters
//   workflow id      1-128    A-Z a-z 0-9 _ - . : @ /   starting with a letter or digit
//   workflow type    1-128    the same
//   signal name      1-128    the same
//   worker id        1-128    the same
//   operation id     1-128    the same (the engine makes them: op_<32 hex>)
//   approval id      1-128    the same (the engine makes them: ap_<12 hex>_<n>)
//   principal name   1-64     A-Z a-z 0-9 _ - . @       starting with a letter or digit
//   tool name        1-128    a-z 0-9 _ . -             (the contract rule)
//   intent hash      64       0-9 a-f                   (SHA-256, lowercase hex)
//
//   text             0-1024   valid UTF-8 without control characters (U+0000-U+001F,
//                             U+007F-U+009F)
//   provider ref     0-256    the same as text
//
// So an identifier can never carry a newline (no forged log line or table row), a NUL, a byte
// that is not UTF-8, a space or a quote, and never outgrows a table column. Texts (a cancel
// reason, an approval reason, a resolution note) are one line of UTF-8.
//
// Failure: Errc::kInvalidArgument whose message names the field, says what is wrong and states
// the rule: "workflowId 'a\x0ab' is not valid: it contains the control character 0x0a at byte
// 1; a workflow id is 1-128 bytes of A-Z a-z 0-9 _ - . : @ /, starting with a letter or digit".
// The offending value is quoted escaped (\xNN for any byte outside printable ASCII) and cut
// after 40 bytes, so the message itself is safe to log. Stateless and thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "reckon/base/error.h"

namespace reckon {

enum class IdKind {
  kWorkflowId,
  kWorkflowType,
  kSignalName,
  kWorkerId,
  kOperationId,
  kApprovalId,
  kPrincipalName,
  kToolName,
  kIntentHash,
  kHandlerName,  // a query's or an update's name (ctx.OnQuery, ctx.OnUpdate)
  kUpdateId,     // an update's id (idempotency key of an update)
};

enum class TextKind {
  kText,         // reasons and notes
  kProviderRef,  // a provider's reference for an effect, given by a person or a tool
};

// "workflow id", "principal name", ...: how messages name a kind.
std::string_view IdKindName(IdKind kind);
// The rule, for messages and docs: "1-128 bytes of A-Z a-z 0-9 _ - . : @ /, starting with a
// letter or digit".
std::string_view IdRule(IdKind kind);
std::size_t MaxIdBytes(IdKind kind);

// Success if `value` follows the rule of `kind`; otherwise Errc::kInvalidArgument naming
// `field` (the kind's name when empty: "workflow id").
Result<void> ValidateId(IdKind kind, std::string_view value, std::string_view field = {});

// Success if `value` is a text of `kind` (see the table above), else as ValidateId.
Result<void> ValidateText(TextKind kind, std::string_view value, std::string_view field);

// The principal's name, as API tokens (docs/SECURITY.md) and approvals record it.
inline Result<void> ValidatePrincipalName(std::string_view name, std::string_view field = {}) {
  return ValidateId(IdKind::kPrincipalName, name, field);
}

// `value` as a message quotes it: printable ASCII as is, other bytes and \ and ' escaped as
// \xNN, cut after `max_bytes` bytes with "... (N bytes)" appended.
std::string QuoteForMessage(std::string_view value, std::size_t max_bytes = 40);

// A message as it may leave the process (an error's text in a reply, over the wire or as JSON):
// valid UTF-8, whole, and without control characters, whatever bytes of a request it quotes.
// Valid UTF-8 is kept, and so are newline and tab (messages that list problems use them); a
// byte that does not begin a valid UTF-8 sequence, NUL and every other control character
// (U+0000-U+001F, U+007F, and U+0080-U+009F, byte by byte) become \xNN. A message already
// clean is returned unchanged, so cleaning twice changes nothing.
std::string CleanMessage(std::string_view message);

}  // namespace reckon
