// RFC 8785 JSON Canonicalization Scheme (JCS).
//
// Canonical form: no insignificant white space; object members sorted by the UTF-16 code units
// of their names; strings with the minimal escaping of RFC 8785 section 3.2.2.2; numbers as
// IEEE-754 doubles written the way ECMAScript's Number::toString writes them (-0 as 0).
//
// Rejected, with Errc::kInvalidArgument and a message that names the problem and its byte
// offset in the input: malformed JSON, invalid UTF-8, lone surrogates (escaped or not),
// duplicate object member names, numbers that do not fit a finite double (1e400), and
// NaN/Infinity. Stateless and thread-safe.
#pragma once

#include <boost/json/value.hpp>

#include <cstdint>
#include <string>
#include <string_view>

#include "reckon/base/error.h"

namespace reckon {

// Canonicalizes JSON text. The result has no trailing newline. Every number is read as the
// nearest double (RFC 8785), so 9007199254740993 canonicalizes to 9007199254740992 and 1e-400
// to 0. Nesting deeper than 1000 arrays/objects is rejected.
Result<std::string> CanonicalizeJson(std::string_view json_text);
// Text, not a JSON string value: without this, CanonicalizeJson("[1]") would be ambiguous.
inline Result<std::string> CanonicalizeJson(const char* json_text) {
  return CanonicalizeJson(std::string_view(json_text));
}

// Canonicalizes an in-memory value. Integers are treated as doubles; an integer whose
// magnitude exceeds 2^53 (and so would not survive the conversion exactly) is rejected, as are
// non-finite doubles and strings that are not valid UTF-8. Messages name the offending value
// by JSON Pointer ("/card/amount").
Result<std::string> CanonicalizeJson(const boost::json::value& value);

// Parses JSON text with the same strictness (and messages) as CanonicalizeJson(text), into a
// value for IntentHash or validation. Integer literals (no fraction or exponent) that fit
// int64 or uint64 become integers, so CanonicalizeJson(value) rejects one above 2^53 instead
// of silently rounding it; other numbers become correctly rounded doubles. Prefer this to
// boost::json::parse for anything that is hashed: Boost 1.81 misrounds some doubles
// (about 13% of the shortest-form numbers in testdata/jcs/numbers.txt).
Result<boost::json::value> ParseStrictJson(std::string_view json_text);

// Writes a finite double the way ECMAScript Number::toString does ("1e+21", "0.1", "-5e-7").
// Precondition: std::isfinite(value).
std::string FormatEcmaScriptNumber(double value);

}  // namespace reckon
