#include "reckon/storage/sqlite/journal_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <utility>

namespace reckon::storage {
namespace {

// The journal's path with every symbolic link resolved (as far as it exists), so that a link
// and its target name one sidecar.
std::string RealPathOf(const std::string& journal_path) {
  std::error_code ec;
  std::filesystem::path real = std::filesystem::weakly_canonical(journal_path, ec);
  return ec ? journal_path : real.string();
}

std::string LockPathOf(const std::string& journal_path) {
  return RealPathOf(journal_path) + ".lock";
}

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

// The record in the sidecar at `lock_path` when a holder has it locked; empty otherwise.
std::string HeldRecord(const std::string& lock_path) {
  int fd = open(lock_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
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

// The pid of the process that holds an exclusive flock on the file (device, inode), from
// /proc/locks ("1: FLOCK  ADVISORY  WRITE 4242 fe:00:123456 0 EOF"); 0 when none is listed
// (no holder, or one this process cannot see).
pid_t FlockHolderPid(const struct stat& file) {
  std::ifstream in("/proc/locks");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string index, type, advisory, mode, id;
    long pid = 0;
    fields >> index >> type;
    if (type == "->") continue;  // a waiter, not a holder
    fields >> advisory >> mode >> pid >> id;
    if (type != "FLOCK" || mode != "WRITE" || pid <= 0) continue;
    unsigned major_number = 0, minor_number = 0;
    unsigned long long inode = 0;
    if (std::sscanf(id.c_str(), "%x:%x:%llu", &major_number, &minor_number, &inode) != 3) {
      continue;
    }
    if (major_number == major(file.st_dev) && minor_number == minor(file.st_dev) &&
        inode == static_cast<unsigned long long>(file.st_ino)) {
      return static_cast<pid_t>(pid);
    }
  }
  return 0;
}

// Who holds the journal file described by `file` (found at `journal_path`): the record beside
// its real path, else the pid holding the file under another name; empty when neither.
std::string Describe(const std::string& journal_path, const struct stat& file) {
  std::string record = HeldRecord(LockPathOf(journal_path));
  if (!record.empty()) return record;
  const pid_t pid = FlockHolderPid(file);
  if (pid <= 0) return {};
  return "pid=" + std::to_string(pid) +
         " (holds this file under another name: a hard link, or another mount of its "
         "directory)";
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

Error Owned(const std::string& journal_path, std::string holder) {
  if (holder.empty()) {
    holder = "a process that has not recorded itself; `fuser -v " + journal_path +
             "` names it";
  }
  return Err(Errc::kFailedPrecondition,
             "journal '" + journal_path + "' is owned by another process (" + holder +
                 "); only one process may write a journal: stop that process, or wait for it "
                 "to exit, then start this one again");
}

// flock(LOCK_EX | LOCK_NB) on `fd`: true when taken, false when another holder has it.
Result<bool> TryLock(int fd, const std::string& path) {
  while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) return false;
    return Err(Errc::kUnavailable, "cannot lock '" + path + "': " + std::strerror(errno));
  }
  return true;
}

}  // namespace

Result<JournalLock> JournalLock::Acquire(const std::string& journal_path) {
  // The journal itself first: the lock that decides. O_NONBLOCK: a FIFO must not hang us.
  int journal_fd =
      open(journal_path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644);
  if (journal_fd < 0) {
    return Err(Errc::kUnavailable, "cannot open journal '" + journal_path + "' to lock it: " +
                                       std::strerror(errno) +
                                       "; check that its directory exists and is writable");
  }
  JournalLock lock(journal_fd, -1, "");  // closes what it holds on every early return
  struct stat file {};
  if (fstat(journal_fd, &file) != 0 || !S_ISREG(file.st_mode)) {
    return Err(Errc::kFailedPrecondition,
               "journal '" + journal_path + "' is not a regular file; give the path of a "
               "journal file (or of one to create)");
  }
  RECKON_TRY(bool taken, TryLock(journal_fd, journal_path));
  if (!taken) return Owned(journal_path, Describe(journal_path, file));

  lock.lock_path_ = LockPathOf(journal_path);
  lock.lock_fd_ = open(lock.lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (lock.lock_fd_ < 0) {
    return Err(Errc::kUnavailable,
               "cannot open the journal lock file '" + lock.lock_path_ + "': " +
                   std::strerror(errno) +
                   (errno == ELOOP ? "; it is a symbolic link: remove it"
                                   : "; check that its directory is writable"));
  }
  RECKON_TRY(bool recorded_by_us, TryLock(lock.lock_fd_, lock.lock_path_));
  // Held without the file's lock: a process of an older release that locked only the sidecar.
  if (!recorded_by_us) return Owned(journal_path, OneLine(ReadAll(lock.lock_fd_)));
  RECKON_TRY(Record(lock.lock_fd_, lock.lock_path_));
  return lock;
}

std::string JournalLock::DescribeHolder(const std::string& journal_path) {
  struct stat file {};
  if (stat(journal_path.c_str(), &file) != 0) return {};
  return Describe(journal_path, file);
}

JournalLock::JournalLock(JournalLock&& other) noexcept
    : journal_fd_(std::exchange(other.journal_fd_, -1)),
      lock_fd_(std::exchange(other.lock_fd_, -1)),
      lock_path_(std::move(other.lock_path_)) {}

JournalLock& JournalLock::operator=(JournalLock&& other) noexcept {
  if (this != &other) {
    Close();
    journal_fd_ = std::exchange(other.journal_fd_, -1);
    lock_fd_ = std::exchange(other.lock_fd_, -1);
    lock_path_ = std::move(other.lock_path_);
  }
  return *this;
}

JournalLock::~JournalLock() { Close(); }

void JournalLock::Close() {
  // Closing the last descriptor of each open file drops its lock. The sidecar first, so that
  // while the record says "held", the file is.
  if (lock_fd_ >= 0) close(std::exchange(lock_fd_, -1));
  if (journal_fd_ >= 0) close(std::exchange(journal_fd_, -1));
}

}  // namespace reckon::storage
