#include "reckon/base/jcs.h"

#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <system_error>
#include <vector>

#include "reckon/base/utf8.h"

// Text is first parsed strictly into a boost::json::value (Parser, which owns every byte-offset
// message), then written canonically by the value path (AppendValue), which CanonicalizeJson
// of an in-memory value shares. TODO(perf): writing straight from the parser would save the
// intermediate tree if canonicalization ever shows up in a profile.

namespace reckon {
namespace {

// Objects and arrays nested deeper than this are rejected; it bounds the parser's recursion.
constexpr int kMaxDepth = 1000;

Error InvalidArgument(std::string message) {
  return Err(Errc::kInvalidArgument, std::move(message));
}

std::string At(std::size_t offset) { return " at byte " + std::to_string(offset); }

std::string HexByte(unsigned char byte) {
  constexpr char kHex[] = "0123456789abcdef";
  return std::string("0x") + kHex[byte >> 4] + kHex[byte & 0xF];
}

// "character 'x'" for printable ASCII, "byte 0xc3" otherwise.
std::string DescribeByte(char c) {
  const auto byte = static_cast<unsigned char>(c);
  if (byte >= 0x20 && byte < 0x7F) return std::string("character '") + c + "'";
  return "byte " + HexByte(byte);
}

// ---- Canonical output ---------------------------------------------------------------------

// Appends valid UTF-8 as a JSON string with RFC 8785's minimal escaping: short escapes where
// JSON has them, \u00xx for other controls, everything else literal.
void AppendQuoted(std::string_view text, std::string& out) {
  constexpr char kHex[] = "0123456789abcdef";
  constexpr std::string_view kSpecial = "\"\\\b\t\n\f\r";
  constexpr std::string_view kShortEscape = "\"\\btnfr";
  out += '"';
  for (const char c : text) {
    if (const std::size_t k = kSpecial.find(c); k != std::string_view::npos) {
      out += '\\';
      out += kShortEscape[k];
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out += c;
    }
  }
  out += '"';
}

struct Member {
  std::u16string sort_key;
  std::string text;  // "name":value, canonical
};

void SortMembers(std::vector<Member>& members) {
  std::stable_sort(members.begin(), members.end(),
                   [](const Member& a, const Member& b) { return a.sort_key < b.sort_key; });
}

void AppendObject(const std::vector<Member>& members, std::string& out) {
  out += '{';
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (i > 0) out += ',';
    out += members[i].text;
  }
  out += '}';
}

// ---- Value path ---------------------------------------------------------------------------

// Appends "/token" to a JSON Pointer (RFC 6901).
void PushPointer(std::string_view token, std::string& pointer) {
  pointer += '/';
  for (const char c : token) {
    if (c == '~') {
      pointer += "~0";
    } else if (c == '/') {
      pointer += "~1";
    } else {
      pointer += c;
    }
  }
}

std::string Where(const std::string& pointer) { return pointer.empty() ? "the root" : pointer; }

Result<void> CheckUtf8(std::string_view text, std::string_view what, const std::string& pointer) {
  if (const std::size_t bad = utf8::FindInvalid(text); bad != std::string_view::npos) {
    return InvalidArgument("invalid UTF-8 at byte " + std::to_string(bad) + " of the " +
                           std::string(what) + " at " + Where(pointer));
  }
  return Ok();
}

// `pointer` names the value being written (for error messages); it is restored on return.
Result<void> AppendValue(const boost::json::value& value, int depth, std::string& pointer,
                         std::string& out) {
  switch (value.kind()) {
    case boost::json::kind::null:
      out += "null";
      return Ok();
    case boost::json::kind::bool_:
      out += value.get_bool() ? "true" : "false";
      return Ok();
    case boost::json::kind::string: {
      RECKON_TRY(CheckUtf8(value.get_string(), "string", pointer));
      AppendQuoted(value.get_string(), out);
      return Ok();
    }
    case boost::json::kind::int64:
    case boost::json::kind::uint64: {
      // Compared as integers: 2^53 + 1 would round to 2^53 as a double.
      constexpr std::uint64_t kLimit = std::uint64_t{1} << 53;
      const bool fits = value.is_int64()
                            ? value.get_int64() >= -static_cast<std::int64_t>(kLimit) &&
                                  value.get_int64() <= static_cast<std::int64_t>(kLimit)
                            : value.get_uint64() <= kLimit;
      if (!fits) {
        return InvalidArgument("integer " + boost::json::serialize(value) + " at " +
                               Where(pointer) +
                               " has a magnitude above 2^53 and would not survive as a double");
      }
      out += FormatEcmaScriptNumber(value.to_number<double>());
      return Ok();
    }
    case boost::json::kind::double_:
      if (!std::isfinite(value.get_double())) {
        return InvalidArgument("number at " + Where(pointer) + " is not finite");
      }
      out += FormatEcmaScriptNumber(value.get_double());
      return Ok();
    case boost::json::kind::array:
    case boost::json::kind::object:
      break;
  }
  if (depth + 1 > kMaxDepth) {
    return InvalidArgument("nesting deeper than " + std::to_string(kMaxDepth) + " levels at " +
                           Where(pointer));
  }
  const std::size_t pointer_size = pointer.size();
  if (value.is_array()) {
    out += '[';
    for (std::size_t i = 0; i < value.get_array().size(); ++i) {
      if (i > 0) out += ',';
      PushPointer(std::to_string(i), pointer);
      RECKON_TRY(AppendValue(value.get_array()[i], depth + 1, pointer, out));
      pointer.resize(pointer_size);
    }
    out += ']';
    return Ok();
  }
  std::vector<Member> members;
  members.reserve(value.get_object().size());
  for (const auto& entry : value.get_object()) {
    PushPointer(entry.key(), pointer);
    RECKON_TRY(CheckUtf8(entry.key(), "member name", pointer));
    Member member{utf8::ToUtf16(entry.key()), {}};
    AppendQuoted(entry.key(), member.text);
    member.text += ':';
    RECKON_TRY(AppendValue(entry.value(), depth + 1, pointer, member.text));
    members.push_back(std::move(member));
    pointer.resize(pointer_size);
  }
  SortMembers(members);
  AppendObject(members, out);
  return Ok();
}

// ---- Text path: a strict recursive-descent parser ------------------------------------------

enum class Numbers { kAllDoubles, kIntegersAsIntegers };

class Parser {
 public:
  Parser(std::string_view text, Numbers numbers) : text_(text), numbers_(numbers) {}

  Result<boost::json::value> Run() {
    if (text_.starts_with("\xEF\xBB\xBF")) {
      return InvalidArgument("byte order mark at byte 0 (JSON text must not start with one)");
    }
    SkipWhitespace();
    RECKON_TRY(boost::json::value value, Value(0));
    SkipWhitespace();
    if (!AtEnd()) return InvalidArgument("trailing data" + At(pos_));
    return value;
  }

 private:
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return text_[pos_]; }
  bool PeekIs(char c) const { return !AtEnd() && Peek() == c; }
  bool PeekDigit() const { return !AtEnd() && Peek() >= '0' && Peek() <= '9'; }

  void SkipWhitespace() {
    while (PeekIs(' ') || PeekIs('\t') || PeekIs('\n') || PeekIs('\r')) ++pos_;
  }

  Error Unexpected(std::string_view expected) const {
    const std::string tail = ", " + std::string(expected);
    if (AtEnd()) return InvalidArgument("unexpected end of input" + At(pos_) + tail);
    for (const std::string_view word : {"NaN", "Infinity", "-Infinity"}) {
      if (text_.substr(pos_).starts_with(word)) {
        return InvalidArgument("unexpected '" + std::string(word) + "'" + At(pos_) +
                               ": NaN and Infinity are not JSON numbers");
      }
    }
    return InvalidArgument("unexpected " + DescribeByte(Peek()) + At(pos_) + tail);
  }

  Result<boost::json::value> Value(int depth) {
    if (AtEnd()) return Unexpected("expected a value");
    switch (Peek()) {
      case '{':
        return Object(depth + 1);
      case '[':
        return Array(depth + 1);
      case '"': {
        RECKON_TRY(std::string text, String());
        return boost::json::value(text);
      }
      case 't':
        return Literal("true", true);
      case 'f':
        return Literal("false", false);
      case 'n':
        return Literal("null", nullptr);
      default:
        if (PeekIs('-') && !text_.substr(pos_).starts_with("-Infinity")) return Number();
        if (PeekDigit()) return Number();
        return Unexpected("expected a value");
    }
  }

  Result<boost::json::value> Literal(std::string_view word, boost::json::value value) {
    if (!text_.substr(pos_).starts_with(word)) {
      std::size_t end = pos_;
      while (end < text_.size() && std::isalpha(static_cast<unsigned char>(text_[end]))) ++end;
      return InvalidArgument("invalid literal '" + std::string(text_.substr(pos_, end - pos_)) +
                             "'" + At(pos_) + ", expected " + std::string(word));
    }
    pos_ += word.size();
    return value;
  }

  Result<void> CheckDepth(int depth) const {
    if (depth <= kMaxDepth) return Ok();
    return InvalidArgument("nesting deeper than " + std::to_string(kMaxDepth) + " levels" +
                           At(pos_));
  }

  Result<boost::json::value> Array(int depth) {
    RECKON_TRY(CheckDepth(depth));
    ++pos_;  // '['
    boost::json::array array;
    SkipWhitespace();
    if (PeekIs(']')) {
      ++pos_;
      return array;
    }
    while (true) {
      SkipWhitespace();
      RECKON_TRY(boost::json::value element, Value(depth));
      array.push_back(std::move(element));
      SkipWhitespace();
      if (!PeekIs(',') && !PeekIs(']')) return Unexpected("expected ',' or ']'");
      if (text_[pos_++] == ']') return array;
    }
  }

  Result<boost::json::value> Object(int depth) {
    RECKON_TRY(CheckDepth(depth));
    ++pos_;  // '{'
    boost::json::object object;
    SkipWhitespace();
    if (PeekIs('}')) {
      ++pos_;
      return object;
    }
    while (true) {
      SkipWhitespace();
      if (!PeekIs('"')) return Unexpected("expected a member name");
      const std::size_t name_offset = pos_;
      RECKON_TRY(std::string name, String());
      if (object.contains(name)) {
        std::string quoted;
        AppendQuoted(name, quoted);
        return InvalidArgument("duplicate member name " + quoted + At(name_offset));
      }
      SkipWhitespace();
      if (!PeekIs(':')) return Unexpected("expected ':'");
      ++pos_;
      SkipWhitespace();
      RECKON_TRY(boost::json::value member, Value(depth));
      object.emplace(name, std::move(member));
      SkipWhitespace();
      if (!PeekIs(',') && !PeekIs('}')) return Unexpected("expected ',' or '}'");
      if (text_[pos_++] == '}') return object;
    }
  }

  // Parses the string literal at pos_ and returns its content as UTF-8.
  Result<std::string> String() {
    const std::size_t start = pos_++;
    std::string decoded;
    while (true) {
      if (AtEnd()) return InvalidArgument("unterminated string starting" + At(start));
      const auto c = static_cast<unsigned char>(Peek());
      if (c == '"') break;
      if (c < 0x20) {
        return InvalidArgument("unescaped control character " + HexByte(c) + " in string" +
                               At(pos_));
      }
      if (c == '\\') {
        RECKON_TRY(Escape(decoded));
        continue;
      }
      const utf8::Decoded d = utf8::Decode(text_, pos_);
      if (d.length == 0) {
        const bool surrogate = utf8::IsEncodedSurrogate(text_, pos_);
        return InvalidArgument((surrogate ? "lone surrogate encoded as UTF-8" : "invalid UTF-8") +
                               At(pos_));
      }
      decoded.append(text_.substr(pos_, d.length));
      pos_ += d.length;
    }
    ++pos_;  // closing quote
    return decoded;
  }

  // Reads the four hex digits of a \u escape that starts at `at`; -1 if they are not hex.
  int Hex4(std::size_t at) const {
    if (text_.size() - at < 6) return -1;
    int value = 0;
    const char* first = text_.data() + at + 2;
    const auto [ptr, ec] = std::from_chars(first, first + 4, value, 16);
    return (ec == std::errc() && ptr == first + 4) ? value : -1;
  }

  Result<void> Escape(std::string& decoded) {
    const std::size_t start = pos_;
    if (text_.size() - pos_ < 2) return InvalidArgument("unterminated escape" + At(start));
    const char kind = text_[pos_ + 1];
    constexpr std::string_view kShort = "\"\\/bfnrt";
    constexpr std::string_view kMeaning = "\"\\/\b\f\n\r\t";
    if (const std::size_t k = kShort.find(kind); k != std::string_view::npos) {
      decoded += kMeaning[k];
      pos_ += 2;
      return Ok();
    }
    if (kind != 'u') {
      return InvalidArgument("invalid escape: backslash followed by " + DescribeByte(kind) +
                             At(start));
    }
    const int unit = Hex4(start);
    if (unit < 0) return InvalidArgument("invalid \\u escape (needs four hex digits)" + At(start));
    pos_ += 6;
    const auto lone = [&] {
      return InvalidArgument("lone surrogate \\" + std::string(text_.substr(start + 1, 5)) +
                             At(start));
    };
    auto cp = static_cast<char32_t>(unit);
    if (unit >= 0xDC00 && unit <= 0xDFFF) return lone();
    if (unit >= 0xD800 && unit <= 0xDBFF) {
      const int low = text_.substr(pos_).starts_with("\\u") ? Hex4(pos_) : -1;
      if (low < 0xDC00 || low > 0xDFFF) return lone();
      pos_ += 6;
      cp = 0x10000 + ((cp - 0xD800) << 10) + static_cast<char32_t>(low - 0xDC00);
    }
    utf8::Append(cp, decoded);
    return Ok();
  }

  std::size_t SkipDigits() {
    const std::size_t start = pos_;
    while (PeekDigit()) ++pos_;
    return pos_ - start;
  }

  Result<boost::json::value> Number() {
    const std::size_t start = pos_;
    if (PeekIs('-')) ++pos_;
    if (PeekIs('0') && pos_ + 1 < text_.size() && text_[pos_ + 1] >= '0' &&
        text_[pos_ + 1] <= '9') {
      return InvalidArgument("leading zero in number" + At(start));
    }
    if (SkipDigits() == 0) return Unexpected("expected a digit");
    const std::size_t int_end = pos_;
    if (PeekIs('.')) {
      ++pos_;
      if (SkipDigits() == 0) return Unexpected("expected a digit after '.'");
    }
    const std::size_t mantissa_end = pos_;
    if (PeekIs('e') || PeekIs('E')) {
      ++pos_;
      if (PeekIs('+') || PeekIs('-')) ++pos_;
      if (SkipDigits() == 0) return Unexpected("expected a digit in the exponent");
    }
    const std::string_view literal = text_.substr(start, pos_ - start);
    const char* first = literal.data();
    const char* last = first + literal.size();
    if (numbers_ == Numbers::kIntegersAsIntegers && pos_ == int_end) {
      if (std::int64_t i = 0; std::from_chars(first, last, i).ec == std::errc()) return i;
      if (std::uint64_t u = 0; std::from_chars(first, last, u).ec == std::errc()) return u;
    }
    double value = 0;
    const auto [ptr, ec] = std::from_chars(first, last, value);
    if (ec == std::errc::result_out_of_range) {
      if (IsOverflow(literal, int_end - start, mantissa_end - start)) {
        const std::string shown =
            literal.size() > 40 ? std::string(literal.substr(0, 40)) + "..." : std::string(literal);
        return InvalidArgument("number " + shown + At(start) + " does not fit a finite double");
      }
      value = 0;  // underflow: the nearest double is zero
    } else if (ec != std::errc() || ptr != last) {
      return Err(Errc::kInternal, "from_chars rejected the number" + At(start));
    }
    return value;
  }

  // from_chars reports overflow and underflow alike; tell them apart by the decimal exponent
  // of the first significant digit (out-of-range magnitudes are above 1e308 or below 1e-323).
  static bool IsOverflow(std::string_view literal, std::size_t int_end, std::size_t mantissa_end) {
    std::size_t i = literal[0] == '-' ? 1 : 0;
    auto exponent = static_cast<long long>(int_end - i) - 1;
    for (; i < mantissa_end && (literal[i] == '0' || literal[i] == '.'); ++i) {
      if (literal[i] == '0') --exponent;
    }
    if (mantissa_end < literal.size()) {
      std::string_view exp = literal.substr(mantissa_end + 1);
      const bool negative = exp[0] == '-';
      if (exp[0] == '-' || exp[0] == '+') exp.remove_prefix(1);
      long long value = 0;
      for (const char c : exp) value = std::min(value * 10 + (c - '0'), 1'000'000'000LL);
      exponent += negative ? -value : value;
    }
    return exponent > 0;
  }

  std::string_view text_;
  Numbers numbers_;
  std::size_t pos_ = 0;
};

}  // namespace

std::string FormatEcmaScriptNumber(double value) {
  if (value == 0) return "0";  // both zeros
  // Shortest round-trip digits in scientific form: "-d.ddde+XX".
  char buffer[32];
  const auto [end, ec] =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  std::string_view sci(buffer, static_cast<std::size_t>(end - buffer));
  std::string out;
  if (sci.front() == '-') {
    out += '-';
    sci.remove_prefix(1);
  }
  const std::size_t e = sci.find('e');
  std::string digits(1, sci[0]);
  if (e > 1) digits.append(sci.substr(2, e - 2));
  std::string_view exponent_text = sci.substr(e + 1);
  if (exponent_text.front() == '+') exponent_text.remove_prefix(1);
  int exponent = 0;
  std::from_chars(exponent_text.data(), exponent_text.data() + exponent_text.size(), exponent);

  // ECMAScript Number::toString: the value is 0.digits * 10^n, with k = digits.size().
  const int k = static_cast<int>(digits.size());
  const int n = exponent + 1;
  if (k <= n && n <= 21) {
    out += digits;
    out.append(static_cast<std::size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out.append(digits, 0, static_cast<std::size_t>(n));
    out += '.';
    out.append(digits, static_cast<std::size_t>(n));
  } else if (-6 < n && n <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-n), '0');
    out += digits;
  } else {
    out += digits[0];
    if (k > 1) {
      out += '.';
      out.append(digits, 1);
    }
    out += n - 1 < 0 ? "e-" : "e+";
    out += std::to_string(std::abs(n - 1));
  }
  return out;
}

Result<boost::json::value> ParseStrictJson(std::string_view json_text) {
  return Parser(json_text, Numbers::kIntegersAsIntegers).Run();
}

Result<std::string> CanonicalizeJson(std::string_view json_text) {
  // RFC 8785 reads every number as a double, so 2^53 + 1 becomes 2^53 rather than an error.
  RECKON_TRY(const boost::json::value value, Parser(json_text, Numbers::kAllDoubles).Run());
  return CanonicalizeJson(value);
}

Result<std::string> CanonicalizeJson(const boost::json::value& value) {
  std::string pointer;
  std::string out;
  RECKON_TRY(AppendValue(value, 0, pointer, out));
  return out;
}

}  // namespace reckon
