#include "reckon/storage/sqlite/journal_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <utility>

namespace reckon::storage {
namespace {

std::string LockPathOf(const std::string& journal_path) { return journal_path + ".lock"; }

std::string Hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

std::string UtcNow() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// This process's command line, arguments joined by spaces, cut to a readable length.
std::string CommandLine() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!raw.empty() && raw.back() == '\0') raw.pop_back();
  for (char& c : raw) {
    if (c == '\0' || c == '\n') c = ' ';
  }
  if (raw.size() > 300) raw = raw.substr(0, 300) + "...";
  return raw;
}

std::string ReadAll(int fd) {
  std::string content;
  char buffer[1024];
  off_t offset = 0;
  while (true) {
    ssize_t n = pread(fd, buffer, sizeof(buffer), offset);
    if (n <= 0) break;
    content.append(buffer, static_cast<std::size_t>(n));
    offset += n;
    if (content.size() > 4096) break;
  }
  return content;
}

// "pid=1 host=h since=... command=..." from the lock file's lines.
std::string OneLine(std::string content) {
  while (!content.empty() && content.back() == '\n') content.pop_back();
  for (char& c : content) {
    if (c == '\n') c = ' ';
  }
  return content.empty() ? "a process that has not recorded itself yet" : content;
}

Result<void> Record(int fd, const std::string& lock_path) {
  const std::string content = "pid=" + std::to_string(getpid()) + "\nhost=" + Hostname() +
                              "\nsince=" + UtcNow() + "\ncommand=" + CommandLine() + "\n";
  if (ftruncate(fd, 0) != 0 ||
      pwrite(fd, content.data(), content.size(), 0) != static_cast<ssize_t>(content.size())) {
    return Err(Errc::kUnavailable, "cannot write the journal lock file '" + lock_path +
                                       "': " + std::strerror(errno));
  }
  return Ok();
}

}  // namespace

Result<JournalLock> JournalLock::Acquire(const std::string& journal_path) {
  std::string lock_path = LockPathOf(journal_path);
  int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Err(Errc::kUnavailable, "cannot open the journal lock file '" + lock_path +
                                       "': " + std::strerror(errno) +
                                       "; check that its directory exists and is writable");
  }
  JournalLock lock(fd, lock_path);  // closes fd on every early return
  while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) {
      return Err(Errc::kUnavailable, "cannot lock the journal lock file '" + lock_path +
                                         "': " + std::strerror(errno));
    }
    return Err(Errc::kFailedPrecondition,
               "journal '" + journal_path + "' is owned by another process (" +
                   OneLine(ReadAll(fd)) + "); only one process may write a journal: stop that "
                   "process, or wait for it to exit, then start this one again");
  }
  RECKON_TRY(Record(fd, lock_path));
  return lock;
}

std::string JournalLock::DescribeHolder(const std::string& journal_path) {
  int fd = open(LockPathOf(journal_path).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string holder;
  if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
    flock(fd, LOCK_UN);
  } else if (errno == EWOULDBLOCK) {
    holder = OneLine(ReadAll(fd));
  }
  close(fd);
  return holder;
}

JournalLock::JournalLock(JournalLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), lock_path_(std::move(other.lock_path_)) {}

JournalLock& JournalLock::operator=(JournalLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    lock_path_ = std::move(other.lock_path_);
  }
  return *this;
}

JournalLock::~JournalLock() {
  if (fd_ >= 0) close(fd_);  // closing the last descriptor of the description drops the lock
}

}  // namespace reckon::storage
