#include "tests/support/open_files_limit.h"

#include <dirent.h>

#include <cstdlib>
#include <set>
#include <string>

namespace reckon::testing {

namespace {

// The descriptor numbers open in `pid` (0: this process), from /proc.
Result<std::set<long>> OpenDescriptors(pid_t pid) {
  const std::string path =
      pid == 0 ? std::string("/proc/self/fd") : "/proc/" + std::to_string(pid) + "/fd";
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return Err(Errc::kUnavailable, "cannot read " + path);
  std::set<long> open;
  const int own = dirfd(dir);
  while (const dirent* entry = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end != entry->d_name && *end == '\0' && !(pid == 0 && fd == own)) open.insert(fd);
  }
  closedir(dir);
  return open;
}

}  // namespace

Result<OpenFilesLimit> OpenFilesLimit::Exhaust(pid_t pid) {
  RECKON_TRY(std::set<long> open, OpenDescriptors(pid));
  long lowest_free = 0;
  while (open.count(lowest_free) > 0) ++lowest_free;
  rlimit saved{};
  if (prlimit(pid, RLIMIT_NOFILE, nullptr, &saved) != 0) {
    return Err(Errc::kUnavailable, "cannot read the open-files limit of process " +
                                       std::to_string(pid));
  }
  rlimit lowered = saved;
  lowered.rlim_cur = static_cast<rlim_t>(lowest_free);
  if (prlimit(pid, RLIMIT_NOFILE, &lowered, nullptr) != 0) {
    return Err(Errc::kUnavailable, "cannot lower the open-files limit of process " +
                                       std::to_string(pid));
  }
  return OpenFilesLimit(pid, saved, lowered.rlim_cur);
}

OpenFilesLimit::OpenFilesLimit(OpenFilesLimit&& other) noexcept
    : pid_(other.pid_), saved_(other.saved_), limit_(other.limit_), restored_(other.restored_) {
  other.restored_ = true;
}

bool OpenFilesLimit::Restore() {
  if (restored_) return true;
  restored_ = true;
  return prlimit(pid_, RLIMIT_NOFILE, &saved_, nullptr) == 0;
}

}  // namespace reckon::testing
