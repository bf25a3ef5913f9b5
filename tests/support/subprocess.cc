#include "tests/support/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

extern char** environ;

namespace reckon::testing {
namespace {

using Clock = std::chrono::steady_clock;

Error SysError(Errc code, const std::string& what, int err) {
  return Err(code, what + ": " + std::strerror(err));
}

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// The child's environment: the parent's, minus names that `env` overrides, plus `env`.
std::vector<std::string> BuildEnvironment(
    const std::vector<std::pair<std::string, std::string>>& env) {
  std::vector<std::string> out;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    std::string_view name = text.substr(0, text.find('='));
    bool overridden = false;
    for (const auto& [added, value] : env) overridden = overridden || added == name;
    if (!overridden) out.emplace_back(text);
  }
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Runs in the child between fork and exec: async-signal-safe calls only. Reports errno
// through `error_fd` (close-on-exec, so a successful exec closes it silently).
[[noreturn]] void ExecChild(const char* path, char* const* argv, char* const* envp,
                            int stdout_fd, int error_fd, const char* stderr_path,
                            bool kill_with_parent, pid_t parent) {
  auto fail = [error_fd] {
    int err = errno;
    (void)!::write(error_fd, &err, sizeof err);
    ::_exit(127);
  };
  if (kill_with_parent) {
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail();
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);  // fails for KILL/STOP

  int null_fd = ::open("/dev/null", O_RDONLY);
  if (null_fd < 0 || ::dup2(null_fd, STDIN_FILENO) < 0) fail();
  if (::dup2(stdout_fd, STDOUT_FILENO) < 0) fail();
  if (stderr_path != nullptr) {
    int err_fd = ::open(stderr_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (err_fd < 0 || ::dup2(err_fd, STDERR_FILENO) < 0) fail();
  }
  ::execve(path, argv, envp);
  fail();
  ::_exit(127);
}

}  // namespace

std::string ExitStatus::ToString() const {
  if (exited) return "exited with code " + std::to_string(code);
  return "killed by signal " + std::to_string(signal) + " (" + ::strsignal(signal) + ")";
}

Result<Subprocess> Subprocess::Start(const std::string& path, SubprocessOptions options) {
  // Everything the child needs is built before fork: it may not allocate afterwards.
  std::vector<std::string> argv_strings;
  argv_strings.push_back(path);
  for (const std::string& arg : options.args) argv_strings.push_back(arg);
  std::vector<char*> argv = Pointers(argv_strings);
  std::vector<std::string> env_strings = BuildEnvironment(options.env);
  std::vector<char*> envp = Pointers(env_strings);
  const char* stderr_path = options.stderr_path.empty() ? nullptr : options.stderr_path.c_str();

  int out_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    return SysError(Errc::kUnavailable, "pipe for the stdout of " + path, errno);
  }
  int error_pipe[2];
  if (::pipe2(error_pipe, O_CLOEXEC) != 0) {
    int err = errno;
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return SysError(Errc::kUnavailable, "pipe for the exec status of " + path, err);
  }
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) {
    ExecChild(path.c_str(), argv.data(), envp.data(), out_pipe[1], error_pipe[1], stderr_path,
              options.kill_with_parent, parent);
  }
  int fork_errno = errno;
  ::close(out_pipe[1]);
  ::close(error_pipe[1]);
  if (pid < 0) {
    ::close(out_pipe[0]);
    ::close(error_pipe[0]);
    return SysError(Errc::kUnavailable, "fork for " + path, fork_errno);
  }
  // The child owns a Subprocess from here on, so every early return reaps it.
  Subprocess child(pid, out_pipe[0]);
  int child_errno = 0;
  ssize_t n;
  do {
    n = ::read(error_pipe[0], &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  ::close(error_pipe[0]);
  if (n > 0) {
    (void)child.Wait();
    return SysError(Errc::kNotFound, "cannot execute '" + path + "'", child_errno);
  }
  int flags = ::fcntl(child.stdout_fd_, F_GETFL);
  ::fcntl(child.stdout_fd_, F_SETFL, flags | O_NONBLOCK);
  return child;
}

Subprocess::Subprocess(Subprocess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      stdout_fd_(std::exchange(other.stdout_fd_, -1)),
      stdout_closed_(other.stdout_closed_),
      buffered_(std::move(other.buffered_)),
      status_(std::exchange(other.status_, std::nullopt)) {}

Subprocess& Subprocess::operator=(Subprocess&& other) noexcept {
  if (this != &other) {
    Release();
    pid_ = std::exchange(other.pid_, -1);
    stdout_fd_ = std::exchange(other.stdout_fd_, -1);
    stdout_closed_ = other.stdout_closed_;
    buffered_ = std::move(other.buffered_);
    status_ = std::exchange(other.status_, std::nullopt);
  }
  return *this;
}

Subprocess::~Subprocess() { Release(); }

void Subprocess::Release() {
  if (running()) {
    ::kill(pid_, SIGKILL);
    (void)Wait();
  }
  CloseFd(stdout_fd_);
  pid_ = -1;
  status_.reset();
  buffered_.clear();
}

Result<bool> Subprocess::Fill(Clock::time_point deadline) {
  if (stdout_fd_ < 0) return Err(Errc::kFailedPrecondition, "no child process");
  for (;;) {
    char chunk[4096];
    ssize_t n = ::read(stdout_fd_, chunk, sizeof chunk);
    if (n > 0) {
      buffered_.append(chunk, static_cast<std::size_t>(n));
      return true;
    }
    if (n == 0) {
      stdout_closed_ = true;
      return true;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      return SysError(Errc::kInternal, "reading the stdout of pid " + std::to_string(pid_), errno);
    }
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd pfd{stdout_fd_, POLLIN, 0};
    int ready = ::poll(&pfd, 1, static_cast<int>(std::min<long>(left.count(), 1 << 30)));
    if (ready < 0 && errno != EINTR) {
      return SysError(Errc::kInternal, "polling the stdout of pid " + std::to_string(pid_), errno);
    }
  }
}

Result<std::string> Subprocess::ReadLine(std::chrono::milliseconds timeout) {
  Clock::time_point deadline = Clock::now() + timeout;
  for (;;) {
    std::size_t newline = buffered_.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffered_.substr(0, newline);
      buffered_.erase(0, newline + 1);
      return line;
    }
    if (stdout_closed_) {
      if (buffered_.empty()) {
        return Err(Errc::kFailedPrecondition,
                   "the stdout of pid " + std::to_string(pid_) + " is closed");
      }
      return std::exchange(buffered_, std::string());
    }
    RECKON_TRY(bool progressed, Fill(deadline));
    if (!progressed) {
      return Err(Errc::kDeadlineExceeded,
                 "no complete line from pid " + std::to_string(pid_) + " within " +
                     std::to_string(timeout.count()) + " ms (partial: '" + buffered_ + "')");
    }
  }
}

Result<std::string> Subprocess::ReadAll(std::chrono::milliseconds timeout) {
  Clock::time_point deadline = Clock::now() + timeout;
  while (!stdout_closed_) {
    RECKON_TRY(bool progressed, Fill(deadline));
    if (!progressed) {
      return Err(Errc::kDeadlineExceeded, "the stdout of pid " + std::to_string(pid_) +
                                              " is still open after " +
                                              std::to_string(timeout.count()) + " ms");
    }
  }
  return std::exchange(buffered_, std::string());
}

Result<void> Subprocess::Kill(int sig) {
  if (!running()) return Err(Errc::kFailedPrecondition, "the child was already reaped");
  if (::kill(pid_, sig) != 0) {
    return SysError(Errc::kInternal, "kill(" + std::to_string(pid_) + ")", errno);
  }
  return Ok();
}

Result<std::optional<ExitStatus>> Subprocess::Reap(bool block) {
  if (status_) return status_;
  if (pid_ <= 0) return Err(Errc::kFailedPrecondition, "no child process");
  int raw = 0;
  pid_t done;
  do {
    done = ::waitpid(pid_, &raw, block ? 0 : WNOHANG);
  } while (done < 0 && errno == EINTR);
  if (done < 0) return SysError(Errc::kInternal, "waitpid(" + std::to_string(pid_) + ")", errno);
  if (done == 0) return std::optional<ExitStatus>();
  ExitStatus status;
  status.exited = WIFEXITED(raw);
  status.code = status.exited ? WEXITSTATUS(raw) : 0;
  status.signal = WIFSIGNALED(raw) ? WTERMSIG(raw) : 0;
  status_ = status;
  return status_;
}

Result<ExitStatus> Subprocess::Wait() {
  RECKON_TRY(std::optional<ExitStatus> status, Reap(/*block=*/true));
  return *status;
}

Result<ExitStatus> Subprocess::WaitFor(std::chrono::milliseconds timeout) {
  Clock::time_point deadline = Clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    RECKON_TRY(std::optional<ExitStatus> status, Reap(/*block=*/false));
    if (status) return *status;
    if (Clock::now() >= deadline) {
      return Err(Errc::kDeadlineExceeded, "pid " + std::to_string(pid_) +
                                              " still running after " +
                                              std::to_string(timeout.count()) + " ms");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
}

Result<ExitStatus> Subprocess::Terminate(std::chrono::milliseconds grace) {
  if (!running()) return Wait();
  RECKON_TRY(Kill(SIGTERM));
  Result<ExitStatus> status = WaitFor(grace);
  if (status || status.error().code() != Errc::kDeadlineExceeded) return status;
  RECKON_TRY(Kill(SIGKILL));
  return Wait();
}

}  // namespace reckon::testing
