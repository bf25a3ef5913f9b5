#include "reckon/base/identifier.h"

#include <algorithm>
#include <string>

#include "reckon/base/utf8.h"

namespace reckon {
namespace {

struct IdRuleSpec {
  std::string_view name;
  std::string_view rule;
  std::size_t min_bytes = 1;
  std::size_t max_bytes = 128;
  std::string_view punctuation = "_-.:@/";  // allowed besides letters and digits
  bool lower_only = false;                   // letters a-z only (tool names)
  bool hex_only = false;                     // 0-9 a-f only (intent hashes)
  bool alnum_first = true;                   // the first byte is a letter or digit
};

IdRuleSpec SpecOf(IdKind kind) {
  constexpr std::string_view kIdRule =
      "1-128 bytes of A-Z a-z 0-9 _ - . : @ /, starting with a letter or digit";
  switch (kind) {
    case IdKind::kWorkflowId: return {.name = "workflow id", .rule = kIdRule};
    case IdKind::kWorkflowType: return {.name = "workflow type", .rule = kIdRule};
    case IdKind::kSignalName: return {.name = "signal name", .rule = kIdRule};
    case IdKind::kWorkerId: return {.name = "worker id", .rule = kIdRule};
    case IdKind::kOperationId: return {.name = "operation id", .rule = kIdRule};
    case IdKind::kApprovalId: return {.name = "approval id", .rule = kIdRule};
    case IdKind::kHandlerName: return {.name = "query or update name", .rule = kIdRule};
    case IdKind::kUpdateId:
      return {.name = "update id",
              .rule = "1-64 bytes of A-Z a-z 0-9 _ - . : @, starting with a letter or digit",
              .max_bytes = 64,
              .punctuation = "_-.:@"};
    case IdKind::kPrincipalName:
      return {.name = "principal name",
              .rule = "1-64 bytes of A-Z a-z 0-9 _ - . @, starting with a letter or digit",
              .max_bytes = 64,
              .punctuation = "_-.@"};
    case IdKind::kToolName:
      return {.name = "tool name",
              .rule = "1-128 bytes of a-z 0-9 _ . - (the contract rule)",
              .punctuation = "_.-",
              .lower_only = true,
              .alnum_first = false};
    case IdKind::kIntentHash:
      return {.name = "intent hash",
              .rule = "64 lowercase hex digits (0-9 a-f), as `reckon show` prints it",
              .min_bytes = 64,
              .max_bytes = 64,
              .hex_only = true,
              .alnum_first = false};
  }
  return {.name = "identifier", .rule = kIdRule};
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }

bool Allowed(const IdRuleSpec& spec, char c) {
  if (spec.hex_only) return IsDigit(c) || (c >= 'a' && c <= 'f');
  if (IsDigit(c) || IsLower(c)) return true;
  if (IsUpper(c)) return !spec.lower_only;
  return spec.punctuation.find(c) != std::string_view::npos;
}

// "a workflow id", "an intent hash".
std::string WithArticle(std::string_view name) {
  const bool vowel =
      !name.empty() && std::string_view("aeiou").find(name[0]) != std::string_view::npos;
  return (vowel ? "an " : "a ") + std::string(name);
}

bool IsControl(unsigned char c) { return c < 0x20 || c == 0x7f; }

std::string Hex2(unsigned char c) {
  constexpr char kDigits[] = "0123456789abcdef";
  return std::string{kDigits[c >> 4], kDigits[c & 0xf]};
}

// What is wrong with the byte at `i`, which the rule does not allow.
std::string DescribeByte(std::string_view value, std::size_t i) {
  const auto c = static_cast<unsigned char>(value[i]);
  const std::string at = " at byte " + std::to_string(i);
  if (c == 0) return "it contains a NUL byte" + at;
  if (c == '\n') return "it contains a newline (0x0a)" + at;
  if (IsControl(c)) return "it contains the control character 0x" + Hex2(c) + at;
  if (c >= 0x80) {
    return utf8::Decode(value, i).length == 0
               ? "it is not valid UTF-8 (byte 0x" + Hex2(c) + at + ")"
               : "it contains a non-ASCII character" + at;
  }
  if (c == ' ') return "it contains a space" + at;
  return "it contains '" + std::string(1, static_cast<char>(c)) + "'" + at +
         ", which is not allowed";
}

Error Invalid(std::string_view field, std::string_view value, const std::string& problem,
              std::string_view name, std::string_view rule) {
  return Err(Errc::kInvalidArgument, std::string(field) + " " + QuoteForMessage(value) +
                                         " is not valid: " + problem + "; " + WithArticle(name) +
                                         " is " + std::string(rule));
}

}  // namespace

std::string_view IdKindName(IdKind kind) { return SpecOf(kind).name; }
std::string_view IdRule(IdKind kind) { return SpecOf(kind).rule; }
std::size_t MaxIdBytes(IdKind kind) { return SpecOf(kind).max_bytes; }

Result<void> ValidateId(IdKind kind, std::string_view value, std::string_view field) {
  const IdRuleSpec spec = SpecOf(kind);
  if (field.empty()) field = spec.name;
  if (value.empty()) {
    return Err(Errc::kInvalidArgument, std::string(field) + " is empty; " + WithArticle(spec.name) +
                                           " is " + std::string(spec.rule));
  }
  const std::string length = "it is " + std::to_string(value.size()) + " bytes long";
  if (value.size() > spec.max_bytes) return Invalid(field, value, length, spec.name, spec.rule);
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (!Allowed(spec, value[i])) {
      return Invalid(field, value, DescribeByte(value, i), spec.name, spec.rule);
    }
  }
  if (value.size() < spec.min_bytes) return Invalid(field, value, length, spec.name, spec.rule);
  if (spec.alnum_first && !(IsDigit(value[0]) || IsLower(value[0]) || IsUpper(value[0]))) {
    return Invalid(field, value, "it starts with '" + std::string(1, value[0]) + "'", spec.name,
                   spec.rule);
  }
  return Ok();
}

Result<void> ValidateText(TextKind kind, std::string_view value, std::string_view field) {
  const bool ref = kind == TextKind::kProviderRef;
  const std::size_t max = ref ? 256 : 1024;
  const std::string_view name = ref ? "provider ref" : "text field";
  const std::string rule =
      "at most " + std::to_string(max) + " bytes of UTF-8 on one line, without control characters";
  if (value.size() > max) {
    return Invalid(field, value, "it is " + std::to_string(value.size()) + " bytes long", name,
                   rule);
  }
  for (std::size_t i = 0; i < value.size();) {
    const auto c = static_cast<unsigned char>(value[i]);
    const utf8::Decoded d = c < 0x80 ? utf8::Decoded{c, 1} : utf8::Decode(value, i);
    if (d.length == 0 || IsControl(c)) {
      return Invalid(field, value, DescribeByte(value, i), name, rule);
    }
    if (d.code_point >= 0x80 && d.code_point <= 0x9f) {  // C1 controls (a terminal's CSI)
      return Invalid(field, value,
                     "it contains the control character U+00" +
                         Hex2(static_cast<unsigned char>(d.code_point)) + " at byte " +
                         std::to_string(i),
                     name, rule);
    }
    i += d.length;
  }
  return Ok();
}

std::string QuoteForMessage(std::string_view value, std::size_t max_bytes) {
  std::string out = "'";
  const std::size_t shown = std::min(value.size(), max_bytes);
  for (std::size_t i = 0; i < shown; ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    if (c < 0x20 || c >= 0x7f || c == '\\' || c == '\'') {
      out += "\\x" + Hex2(c);
    } else {
      out += static_cast<char>(c);
    }
  }
  out += "'";
  if (shown < value.size()) out += "... (" + std::to_string(value.size()) + " bytes)";
  return out;
}

std::string CleanMessage(std::string_view message) {
  std::string out;
  out.reserve(message.size());
  for (std::size_t i = 0; i < message.size();) {
    const auto c = static_cast<unsigned char>(message[i]);
    const utf8::Decoded d = utf8::Decode(message, i);
    const bool c1 = d.length == 2 && d.code_point >= 0x80 && d.code_point <= 0x9f;
    if (d.length == 0 || c1 || (IsControl(c) && c != '\n' && c != '\t')) {
      const std::size_t bytes = c1 ? 2 : 1;
      for (std::size_t k = 0; k < bytes; ++k) {
        out += "\\x" + Hex2(static_cast<unsigned char>(message[i + k]));
      }
      i += bytes;
      continue;
    }
    out.append(message.substr(i, d.length));
    i += d.length;
  }
  return out;
}

}  // namespace reckon
