#include "bench/proc_memory.h"

#include <malloc.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace reckon::bench {
namespace {

double StatusMiB(const char* key) {
  std::FILE* status = std::fopen("/proc/self/status", "r");
  if (status == nullptr) return 0;
  char line[256];
  long kib = 0;
  const std::size_t key_len = std::strlen(key);
  while (std::fgets(line, sizeof line, status) != nullptr) {
    if (std::strncmp(line, key, key_len) == 0 && line[key_len] == ':') {
      std::sscanf(line + key_len + 1, "%ld", &kib);
      break;
    }
  }
  std::fclose(status);
  return kib / 1024.0;
}

}  // namespace

double RssMiB() { return StatusMiB("VmRSS"); }
double PeakRssMiB() { return StatusMiB("VmHWM"); }

double SelfCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

void TrimHeap() { malloc_trim(0); }

std::vector<std::string> RunSelf(const std::vector<std::string>& args, const std::string& prefix) {
  int fds[2];
  if (pipe(fds) != 0) {
    std::perror("long_bench: pipe");
    std::exit(1);
  }
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) {
    std::perror("long_bench: fork");
    std::exit(1);
  }
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> argv;
    std::string self = "long_bench";
    argv.push_back(self.data());
    for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    execv("/proc/self/exe", argv.data());
    std::perror("long_bench: exec /proc/self/exe");
    _exit(127);
  }
  close(fds[1]);
  std::FILE* out = fdopen(fds[0], "r");
  std::vector<std::string> results;
  char line[4096];
  while (std::fgets(line, sizeof line, out) != nullptr) {
    std::string text(line);
    if (text.rfind(prefix, 0) == 0) {
      results.push_back(text);
    } else {
      std::fputs(line, stdout);
    }
  }
  std::fclose(out);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "long_bench: the child run (%s) failed with status %d\n",
                 args.empty() ? "" : args.front().c_str(), status);
    std::exit(1);
  }
  return results;
}

}  // namespace reckon::bench
