#include "reckon/protocol/credentials.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "reckon/auth/token.h"

namespace reckon::api {

Result<std::string> ReadTokenFile(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    return Err(Errc::kInvalidArgument,
               "cannot read token file '" + path + "': " + std::strerror(errno));
  }
  if ((info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(info.st_mode & 07777));
    return Err(Errc::kFailedPrecondition, "token file '" + path + "' is readable by others (mode " +
                                              mode + "): run `chmod 600 " + path + "`");
  }
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) return Err(Errc::kInvalidArgument, "cannot read token file '" + path + "'");
  return auth::ParseToken(text.str(), "token file '" + path + "'");
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
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Err(Errc::kUnavailable, "cannot write token file '" + path + "': " + std::strerror(errno));
  }
  // An existing file keeps its mode through O_TRUNC: make sure it is private.
  const bool ok = ::fchmod(fd, 0600) == 0;
  std::string text(token);
  text += '\n';
  std::size_t written = 0;
  while (ok && written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || written != text.size() || !synced) {
    return Err(Errc::kUnavailable, "cannot write token file '" + path + "'");
  }
  return Ok();
}

}  // namespace reckon::api
