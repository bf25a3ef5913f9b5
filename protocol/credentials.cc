#include "reckon/protocol/credentials.h"

#include <openssl/crypto.h>
#include <unistd.h>

#include <cstdlib>

#include "reckon/auth/token.h"
#include "reckon/base/private_file.h"

namespace reckon::api {

Result<std::string> ReadTokenFile(const std::string& path) {
  RECKON_TRY(std::string text, ReadPrivateFile(path, "token file"));
  auto token = auth::ParseToken(text, "token file '" + path + "'");
  OPENSSL_cleanse(text.data(), text.size());
  return token;
}

Result<std::string> LoadClientToken(std::string_view token_file_flag) {
  if (!token_file_flag.empty()) return ReadTokenFile(std::string(token_file_flag));
  if (const char* env = std::getenv("RECKON_TOKEN_FILE"); env != nullptr && *env != '\0') {
    return ReadTokenFile(env);
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    const std::string fallback = std::string(home) + "/.config/reckon/token";
    if (::access(fallback.c_str(), F_OK) == 0) return ReadTokenFile(fallback);
  }
  return std::string();
}

Result<void> WriteTokenFile(const std::string& path, std::string_view token) {
  std::string text(token);
  text += '\n';
  auto written = WritePrivateFile(path, text, "token file");
  OPENSSL_cleanse(text.data(), text.size());
  return written;
}

}  // namespace reckon::api
