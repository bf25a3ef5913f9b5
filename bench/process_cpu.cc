#include "bench/process_cpu.h"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

namespace reckon::bench {
namespace {

// The fields of /proc/PID/stat after the command name: [0] is field 3 (state). Empty when
// the process is gone.
std::vector<std::string> StatFields(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  if (close == std::string::npos || close + 2 > text.size()) return {};
  std::istringstream fields(text.substr(close + 2));
  return {std::istream_iterator<std::string>(fields), std::istream_iterator<std::string>()};
}

double Ticks(const std::string& field) { return std::stod(field); }

}  // namespace

double ProcessCpuSeconds(pid_t pid) {
  const auto f = StatFields(pid);
  if (f.size() < 13) return 0;
  return (Ticks(f[11]) + Ticks(f[12])) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double PostgresCpuSeconds(int port) {
  const std::string flag = std::string("-p") + '\0' + std::to_string(port) + '\0';
  pid_t postmaster = 0;
  std::vector<pid_t> pids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    pids.push_back(std::stoi(name));
    std::ifstream file(entry.path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    if (cmdline.find("postgres") != std::string::npos && cmdline.find(flag) != std::string::npos) {
      postmaster = pids.back();
    }
  }
  if (postmaster == 0) return 0;
  double total = 0;
  for (pid_t pid : pids) {
    const auto f = StatFields(pid);
    if (f.size() < 15) continue;
    const pid_t ppid = std::stoi(f[1]);
    if (pid != postmaster && ppid != postmaster) continue;
    double ticks = Ticks(f[11]) + Ticks(f[12]);                        // utime, stime
    if (pid == postmaster) ticks += Ticks(f[13]) + Ticks(f[14]);        // cutime, cstime
    total += ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
  }
  return total;
}

double PostgresTransactions(const std::string& postgres_url, const std::string& database) {
  const std::string command =
      "/usr/lib/postgresql/15/bin/psql -Atq '" + postgres_url +
      "' -c \"SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = '" +
      database + "'\"";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return -1;
  double count = -1;
  if (std::fscanf(pipe, "%lf", &count) != 1) count = -1;
  ::pclose(pipe);
  return count;
}

double LoadAverage() {
  std::ifstream file("/proc/loadavg");
  double load = -1;
  if (!(file >> load)) return -1;
  return load;
}

}  // namespace reckon::bench
