// Strict UTF-8 helpers (RFC 3629): decoding one sequence, encoding a code point, and UTF-16
// code units for ordering. Invalid means: a bad lead or continuation byte, a truncated
// sequence, an overlong form, an encoded surrogate (U+D800..U+DFFF) or a code point above
// U+10FFFF. Header-only, stateless and thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace reckon::utf8 {

struct Decoded {
  char32_t code_point = 0;
  std::size_t length = 0;  // bytes consumed; 0 means s[i] does not start a valid sequence
};

// Decodes the sequence that starts at s[i]. Precondition: i < s.size().
inline Decoded Decode(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return {lead, 1};
  std::size_t length = 0;
  char32_t cp = 0;
  char32_t min = 0;
  if ((lead & 0xE0) == 0xC0) {
    length = 2, cp = lead & 0x1F, min = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, cp = lead & 0x0F, min = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, cp = lead & 0x07, min = 0x10000;
  } else {
    return {};
  }
  if (s.size() - i < length) return {};
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return {};
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {};
  return {cp, length};
}

// True if the invalid sequence at s[i] is a UTF-16 surrogate encoded as UTF-8 (ED A0..BF ..).
inline bool IsEncodedSurrogate(std::string_view s, std::size_t i) {
  return static_cast<unsigned char>(s[i]) == 0xED && i + 1 < s.size() &&
         (static_cast<unsigned char>(s[i + 1]) & 0xE0) == 0xA0;
}

// The offset of the first invalid sequence in s, or std::string_view::npos if s is valid.
inline std::size_t FindInvalid(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const Decoded d = Decode(s, i);
    if (d.length == 0) return i;
    i += d.length;
  }
  return std::string_view::npos;
}

// Appends the UTF-8 encoding of a code point. Precondition: cp <= U+10FFFF, not a surrogate.
inline void Append(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// The UTF-16 code units of s. Precondition: s is valid UTF-8 (FindInvalid(s) == npos).
inline std::u16string ToUtf16(std::string_view s) {
  std::u16string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const Decoded d = Decode(s, i);
    i += d.length;
    if (d.code_point < 0x10000) {
      out += static_cast<char16_t>(d.code_point);
    } else {
      out += static_cast<char16_t>(0xD800 + ((d.code_point - 0x10000) >> 10));
      out += static_cast<char16_t>(0xDC00 + ((d.code_point - 0x10000) & 0x3FF));
    }
  }
  return out;
}

}  // namespace reckon::utf8
