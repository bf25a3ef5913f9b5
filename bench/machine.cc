#include "bench/machine.h"

#include <sys/statfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

namespace reckon::bench {
namespace {

std::string CpuModel() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown cpu";
}

std::string FilesystemOf(const std::string& dir) {
  struct statfs fs {};
  if (statfs(dir.c_str(), &fs) != 0) return "unknown fs";
  switch (fs.f_type) {
    case 0xEF53: return "ext4";
    case 0x01021994: return "tmpfs";
    case 0x58465342: return "xfs";
    case 0x9123683E: return "btrfs";
    case 0x794c7630: return "overlayfs";
    default: return "fs-0x" + [&] {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%lx", static_cast<unsigned long>(fs.f_type));
      return std::string(buf);
    }();
  }
}

}  // namespace

std::string DescribeMachine(const std::string& dir) {
  struct utsname uts {};
  uname(&uts);
  long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  double gib = double(pages) * double(page_size) / (1024.0 * 1024 * 1024);
  char buf[512];
  std::snprintf(buf, sizeof buf, "machine: %s, %u cores, %.0f GiB, Linux %s, %s at %s",
                CpuModel().c_str(), std::thread::hardware_concurrency(), gib, uts.release,
                FilesystemOf(dir).c_str(), dir.c_str());
  return buf;
}

}  // namespace reckon::bench
