#include "reckon/auth/token.h"

#include <sys/random.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "reckon/base/intent_hash.h"

namespace reckon::auth {
namespace {

constexpr std::string_view kPrefix = "rk1_";
constexpr std::size_t kRandomBytes = 32;

}  // namespace

Result<std::string> GenerateToken() {
  std::array<unsigned char, kRandomBytes> bytes{};
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = getrandom(bytes.data() + got, bytes.size() - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Err(Errc::kUnavailable, std::string("cannot read random bytes for a token: ") +
                                         std::strerror(errno));
    }
    got += static_cast<std::size_t>(n);
  }
  constexpr char kHex[] = "0123456789abcdef";
  std::string token(kPrefix);
  for (unsigned char b : bytes) {
    token += kHex[b >> 4];
    token += kHex[b & 0xf];
  }
  return token;
}

bool LooksLikeToken(std::string_view text) {
  if (text.size() != kPrefix.size() + 2 * kRandomBytes || !text.starts_with(kPrefix)) return false;
  for (char c : text.substr(kPrefix.size())) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string TokenHash(std::string_view token) { return ToHex(Sha256(token)); }

Result<std::string> ParseToken(std::string_view text, std::string_view source) {
  constexpr std::string_view kSpace = " \t\r\n";
  const std::size_t begin = text.find_first_not_of(kSpace);
  const std::size_t end = text.find_last_not_of(kSpace);
  const std::string_view token =
      begin == std::string_view::npos ? std::string_view() : text.substr(begin, end - begin + 1);
  if (!LooksLikeToken(token)) {
    return Err(Errc::kInvalidArgument,
               std::string(source) + " does not hold a Reckon API token (expected \"rk1_\" and 64 "
                                     "hex digits, as `reckon auth token create` prints)");
  }
  return std::string(token);
}

}  // namespace reckon::auth
