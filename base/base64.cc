#include "reckon/base/base64.h"

#include <array>
#include <cstdint>

namespace reckon {
namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// -1 for a character outside the alphabet.
constexpr std::array<int, 256> DecodeTable() {
  std::array<int, 256> table{};
  for (int& entry : table) entry = -1;
  for (std::size_t i = 0; i < kAlphabet.size(); ++i) {
    table[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int>(i);
  }
  return table;
}
constexpr std::array<int, 256> kDecode = DecodeTable();

Error BadCharacter(std::size_t offset, char c) {
  const auto byte = static_cast<unsigned char>(c);
  std::string shown = byte >= 0x20 && byte < 0x7f ? std::string("'") + c + "'"
                                                  : "byte " + std::to_string(byte);
  return Error(Errc::kInvalidArgument, "base64: " + shown + " at offset " +
                                           std::to_string(offset) +
                                           " is not in the standard alphabet (A-Z a-z 0-9 + /)");
}

}  // namespace

std::string EncodeBase64(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t n = (static_cast<unsigned char>(bytes[i]) << 16) |
                            (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                            static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  const std::size_t rest = bytes.size() - i;
  if (rest > 0) {
    std::uint32_t n = static_cast<unsigned char>(bytes[i]) << 16;
    if (rest == 2) n |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += rest == 2 ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

Result<std::string> DecodeBase64(std::string_view text) {
  if (text.size() % 4 != 0) {
    return Err(Errc::kInvalidArgument, "base64: the length " + std::to_string(text.size()) +
                                           " is not a multiple of 4 (is the text cut short?)");
  }
  std::size_t padding = 0;
  if (!text.empty() && text.back() == '=') padding = text[text.size() - 2] == '=' ? 2 : 1;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  const std::size_t data_end = text.size() - padding;
  std::uint32_t n = 0;
  int bits = 0;
  for (std::size_t i = 0; i < data_end; ++i) {
    const int value = kDecode[static_cast<unsigned char>(text[i])];
    if (value < 0) return Error(BadCharacter(i, text[i]));
    n = (n << 6) | static_cast<std::uint32_t>(value);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((n >> bits) & 0xff);
    }
  }
  if ((n & ((1u << bits) - 1)) != 0) {
    return Err(Errc::kInvalidArgument,
               "base64: the last character before the padding has bits set that encode nothing "
               "(not a canonical encoding)");
  }
  return out;
}

}  // namespace reckon
