#include "reckon/storage/crypto/payload_keys.h"

#include <openssl/crypto.h>

#include <optional>
#include <utility>

#include "reckon/base/private_file.h"

namespace reckon::storage {
namespace {

constexpr std::size_t kMaxIdLength = 32;

bool IsIdChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         c == '.' || c == '_' || c == '-';
}

std::optional<unsigned char> HexDigit(char c) {
  if (c >= '0' && c <= '9') return static_cast<unsigned char>(c - '0');
  if (c >= 'a' && c <= 'f') return static_cast<unsigned char>(c - 'a' + 10);
  if (c >= 'A' && c <= 'F') return static_cast<unsigned char>(c - 'A' + 10);
  return std::nullopt;
}

bool ParseHexKey(std::string_view hex, std::array<unsigned char, 32>& out) {
  if (hex.size() != 64) return false;
  for (std::size_t i = 0; i < 32; ++i) {
    auto hi = HexDigit(hex[2 * i]);
    auto lo = HexDigit(hex[2 * i + 1]);
    if (!hi || !lo) return false;
    out[i] = static_cast<unsigned char>((*hi << 4) | *lo);
  }
  return true;
}

// The whitespace-separated words of a line, comment removed.
std::vector<std::string_view> Words(std::string_view line) {
  if (auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

// One line's key (nullopt for a blank line); `sealing` is set when the line is marked.
Result<std::optional<PayloadKey>> ParseLine(std::string_view line, const std::string& where,
                                            bool& sealing) {
  std::vector<std::string_view> words = Words(line);
  sealing = false;
  if (words.empty()) return std::optional<PayloadKey>();
  if (words.size() > 3 || (words.size() == 3 && words[2] != "seal") || words.size() < 2) {
    return Err(Errc::kInvalidArgument,
               where + ": expected `ID HEX` or `ID HEX seal` (the key as 64 hexadecimal digits)");
  }
  if (!IsValidPayloadKeyId(words[0])) {
    return Err(Errc::kInvalidArgument, where + ": the key id must be 1 to 32 characters among "
                                               "A-Z a-z 0-9 . _ -");
  }
  PayloadKey key;
  key.id = std::string(words[0]);
  if (!ParseHexKey(words[1], key.bytes)) {
    return Err(Errc::kInvalidArgument,
               where + ": the key must be 64 hexadecimal digits (256 bits; generate one with "
                       "`openssl rand -hex 32`)");
  }
  sealing = words.size() == 3;
  return std::optional<PayloadKey>(std::move(key));
}

}  // namespace

PayloadKey::~PayloadKey() { OPENSSL_cleanse(bytes.data(), bytes.size()); }

PayloadKey::PayloadKey(PayloadKey&& other) noexcept : id(std::move(other.id)), bytes(other.bytes) {
  OPENSSL_cleanse(other.bytes.data(), other.bytes.size());
}

PayloadKey& PayloadKey::operator=(PayloadKey&& other) noexcept {
  if (this != &other) {
    id = std::move(other.id);
    bytes = other.bytes;
    OPENSSL_cleanse(other.bytes.data(), other.bytes.size());
  }
  return *this;
}

bool IsValidPayloadKeyId(std::string_view id) {
  if (id.empty() || id.size() > kMaxIdLength) return false;
  for (char c : id) {
    if (!IsIdChar(c)) return false;
  }
  return true;
}

Result<PayloadKeySet> ParsePayloadKeys(std::string_view text, std::string source) {
  PayloadKeySet set;
  std::optional<std::size_t> marked;
  int line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    const std::string where = "payload key file '" + source + "' line " +
                              std::to_string(line_number);
    bool sealing = false;
    RECKON_TRY(std::optional<PayloadKey> key, ParseLine(line, where, sealing));
    if (!key) continue;
    for (const PayloadKey& known : set.keys) {
      if (known.id == key->id) {
        return Err(Errc::kInvalidArgument,
                   where + ": key id '" + key->id + "' is already used by an earlier line");
      }
    }
    if (sealing && marked) {
      return Err(Errc::kInvalidArgument,
                 where + ": a second key is marked `seal`; mark only the one that seals");
    }
    if (sealing) marked = set.keys.size();
    set.keys.push_back(std::move(*key));
  }
  if (set.keys.empty()) {
    return Err(Errc::kInvalidArgument,
               "payload key file '" + source + "' holds no key; add a line `ID HEX` (generate "
               "the key with `openssl rand -hex 32`)");
  }
  set.sealing = marked.value_or(set.keys.size() - 1);
  set.source = std::move(source);
  return set;
}

Result<PayloadKeySet> ReadPayloadKeyFile(const std::string& path) {
  RECKON_TRY(std::string text, ReadPrivateFile(path, "payload key file"));
  auto parsed = ParsePayloadKeys(text, path);
  OPENSSL_cleanse(text.data(), text.size());
  return parsed;
}

}  // namespace reckon::storage
