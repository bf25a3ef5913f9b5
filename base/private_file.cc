#include "reckon/base/private_file.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

namespace reckon {
namespace {

std::string ModeText(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// Closes a descriptor when it goes out of scope.
struct Descriptor {
  int fd;
  ~Descriptor() { ::close(fd); }
};

std::string Named(std::string_view what, const std::string& path) {
  return std::string(what) + " '" + path + "'";
}

// Ok when `path` does not exist or may be replaced by a secret of ours (see the header).
Result<void> CheckReplaceable(const std::string& path, std::string_view what) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) return Ok();
    return Err(Errc::kUnavailable,
               "cannot inspect " + Named(what, path) + ": " + std::strerror(errno));
  }
  const std::string fix = ": remove it (`rm " + path + "`) or give another path";
  if (S_ISLNK(info.st_mode)) {
    return Err(Errc::kFailedPrecondition,
               Named(what, path) + " is a symbolic link, and a secret is never written "
               "through a link (it could lead anywhere)" + fix);
  }
  if (!S_ISREG(info.st_mode)) {
    return Err(Errc::kFailedPrecondition,
               Named(what, path) + " exists and is not a regular file" + fix);
  }
  if (info.st_uid != ::geteuid()) {
    return Err(Errc::kFailedPrecondition,
               Named(what, path) + " exists and belongs to another user (uid " +
                   std::to_string(info.st_uid) + "), who could read a secret written there" +
                   fix);
  }
  if ((info.st_mode & 077) != 0) {
    return Err(Errc::kFailedPrecondition,
               Named(what, path) + " exists and group or others may access it (mode " +
                   ModeText(info.st_mode) + "), so someone else may have prepared it or hold "
                   "it open" + fix);
  }
  return Ok();
}

// Writes all of `content` to `fd` and fsyncs it (mode 0600 first: mkostemp's, said again).
Result<void> WriteAll(int fd, std::string_view content) {
  if (::fchmod(fd, 0600) != 0) return Err(Errc::kUnavailable, std::strerror(errno));
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Err(Errc::kUnavailable, std::strerror(errno));
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) return Err(Errc::kUnavailable, std::strerror(errno));
  return Ok();
}

// fsync of the directory holding `path`, so that the rename survives a crash.
void SyncDirectory(const std::string& directory) {
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

Result<std::string> ReadPrivateFile(const std::string& path, std::string_view what) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT) return Err(Errc::kNotFound, Named(what, path) + " does not exist");
    return Err(Errc::kUnavailable, "cannot open " + Named(what, path) + ": " + std::strerror(error));
  }
  const Descriptor closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    return Err(Errc::kUnavailable,
               "cannot inspect " + Named(what, path) + ": " + std::strerror(errno));
  }
  if (!S_ISREG(info.st_mode)) {
    return Err(Errc::kFailedPrecondition, Named(what, path) + " is not a regular file");
  }
  if ((info.st_mode & 077) != 0) {
    return Err(Errc::kFailedPrecondition,
               Named(what, path) + " may be read or written by group or others (mode " +
                   ModeText(info.st_mode) + "), and it holds a secret: run `chmod 600 " + path +
                   "`");
  }
  std::string content;
  char buffer[4096];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      OPENSSL_cleanse(buffer, sizeof buffer);
      OPENSSL_cleanse(content.data(), content.size());
      return Err(Errc::kUnavailable,
                 "cannot read " + Named(what, path) + ": " + std::strerror(error));
    }
    if (n == 0) break;
    content.append(buffer, static_cast<std::size_t>(n));
  }
  OPENSSL_cleanse(buffer, sizeof buffer);
  return content;
}

Result<void> CheckPrivateFileTarget(const std::string& path, std::string_view what) {
  return CheckReplaceable(path, what);
}

Result<void> WritePrivateFile(const std::string& path, std::string_view content,
                              std::string_view what) {
  RECKON_TRY(CheckReplaceable(path, what));
  const std::filesystem::path target(path);
  const std::string directory =
      target.has_parent_path() ? target.parent_path().string() : std::string(".");
  std::string temporary =
      (std::filesystem::path(directory) / ("." + target.filename().string() + ".XXXXXX"))
          .string();
  std::vector<char> name(temporary.begin(), temporary.end());
  name.push_back('\0');
  // mkostemp: O_CREAT | O_EXCL, mode 0600, a name nobody had.
  const int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) {
    return Err(Errc::kUnavailable, "cannot create a file beside " + Named(what, path) + ": " +
                                       std::strerror(errno) +
                                       "; check that its directory exists and is writable");
  }
  temporary = name.data();
  Result<void> written = WriteAll(fd, content);
  ::close(fd);
  if (!written) {
    ::unlink(temporary.c_str());
    return Err(Errc::kUnavailable,
               "cannot write " + Named(what, path) + ": " + written.error().message());
  }
  // Checked again just before the rename, to narrow the window in which it could change.
  if (auto replaceable = CheckReplaceable(path, what); !replaceable) {
    ::unlink(temporary.c_str());
    return replaceable.error();
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    return Err(Errc::kUnavailable,
               "cannot write " + Named(what, path) + ": " + std::strerror(error));
  }
  SyncDirectory(directory);
  return Ok();
}

}  // namespace reckon
