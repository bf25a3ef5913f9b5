#include "tests/support/postgres_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "tests/support/subprocess.h"

namespace reckon::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* kDebianBinDir = "/usr/lib/postgresql/15/bin";

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string Tail(const std::string& text, int lines) {
  std::size_t pos = text.size();
  for (int i = 0; i <= lines && pos > 0; ++i) {
    pos = text.rfind('\n', pos - 1);
    if (pos == std::string::npos) return text;
  }
  return text.substr(pos + 1);
}

// Runs a program to completion; its stderr goes to `log`. Errors carry the log's tail.
Result<void> RunToCompletion(const std::string& path, std::vector<std::string> args,
                             const std::string& log) {
  std::error_code ignored;
  std::filesystem::remove(log, ignored);  // the error shows this run's lines only
  SubprocessOptions options;
  options.args = std::move(args);
  options.stderr_path = log;
  RECKON_TRY(Subprocess child, Subprocess::Start(path, std::move(options)));
  auto out = child.ReadAll(120s);
  RECKON_TRY(ExitStatus status, child.Wait());
  if (status.Succeeded()) return Ok();
  return Err(Errc::kUnavailable, path + " " + status.ToString() + ":\n" +
                                     (out ? out.value() : "") + Tail(ReadFile(log), 20));
}

// A port on 127.0.0.1 nobody listens on right now.
Result<int> FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return Err(Errc::kUnavailable, "socket() failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  ::close(fd);
  if (!ok) return Err(Errc::kUnavailable, "cannot find a free port on 127.0.0.1");
  return static_cast<int>(ntohs(addr.sin_port));
}

// The system user `name`, created (as a system user without a home or a shell) if missing.
Result<passwd> EnsureUser(const std::string& name, const std::string& log) {
  if (passwd* pw = ::getpwnam(name.c_str())) return *pw;
  auto created = RunToCompletion(
      "/usr/sbin/useradd",
      {"--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent", "--shell",
       "/usr/sbin/nologin", name},
      log);
  if (passwd* pw = ::getpwnam(name.c_str())) return *pw;  // created, here or by a neighbour
  return Err(Errc::kFailedPrecondition,
             "cannot create the system user '" + name + "' that the test PostgreSQL runs as: " +
                 (created ? std::string("useradd succeeded but the user is missing")
                          : created.error().message()));
}

// The pids whose parent is `parent` (its backends), from /proc.
std::vector<pid_t> ChildrenOf(pid_t parent) {
  std::vector<pid_t> children;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = ReadFile(entry.path() / "stat");
    const std::size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent) children.push_back(static_cast<pid_t>(std::stoi(name)));
  }
  return children;
}

// True once `pid` is gone or a zombie (a reaper we do not control may leave it so).
bool Gone(pid_t pid) {
  const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  const std::size_t close = stat.rfind(')');
  return close == std::string::npos || stat.size() < close + 3 || stat[close + 2] == 'Z';
}

}  // namespace

Result<std::unique_ptr<PostgresServer>> PostgresServer::Start(PostgresServerOptions options) {
  std::unique_ptr<PostgresServer> server(new PostgresServer());
  const char* env_bin = std::getenv("RECKON_POSTGRES_BIN");
  server->bin_dir_ = !options.bin_dir.empty() ? options.bin_dir
                     : (env_bin && *env_bin)  ? env_bin
                                              : kDebianBinDir;
  for (const char* tool : {"initdb", "postgres", "psql"}) {
    const std::string path = server->bin_dir_ + "/" + tool;
    if (::access(path.c_str(), X_OK) != 0) {
      return Err(Errc::kFailedPrecondition,
                 "PostgreSQL 15 is not installed: " + path + " is missing. Run `./dev test` "
                 "(or `./dev build`), which installs postgresql-15 and libpq-dev from "
                 "cmake/debian-packages.txt, or set RECKON_POSTGRES_BIN to its bin directory");
    }
  }
  server->dir_ = std::make_unique<TempDir>();
  const std::string dir = server->dir_->path().string();
  const std::string setup_log = dir + "/setup.log";
  if (::geteuid() == 0) {
    RECKON_TRY(passwd pw, EnsureUser(options.user, setup_log));
    server->user_ = options.user;
    server->uid_ = pw.pw_uid;
    server->gid_ = pw.pw_gid;
    server->drop_privileges_ = true;
    if (::chown(dir.c_str(), pw.pw_uid, pw.pw_gid) != 0) {
      return Err(Errc::kUnavailable, "cannot give " + dir + " to user " + options.user);
    }
  } else {
    passwd* pw = ::getpwuid(::geteuid());
    if (pw == nullptr) return Err(Errc::kFailedPrecondition, "the current user has no name");
    server->user_ = pw->pw_name;
  }
  std::vector<std::string> initdb = {server->bin_dir_ + "/initdb", "-D", dir + "/data", "-U",
                                     server->user_, "--auth=trust", "--encoding=UTF8",
                                     "--locale=C", "--no-sync", "--no-instructions"};
  if (options.data_checksums) initdb.push_back("--data-checksums");
  if (server->drop_privileges_) {
    initdb.insert(initdb.begin(), {"-u", server->user_, "--"});
    RECKON_TRY(RunToCompletion("/usr/sbin/runuser", initdb, dir + "/initdb.log"));
  } else {
    const std::string path = initdb.front();
    initdb.erase(initdb.begin());
    RECKON_TRY(RunToCompletion(path, initdb, dir + "/initdb.log"));
  }
  if (!options.trusted_networks.empty()) {
    std::ofstream hba(dir + "/data/pg_hba.conf", std::ios::app);
    for (const std::string& network : options.trusted_networks) {
      hba << "host all all " << network << " trust\n";
    }
    if (!hba) return Err(Errc::kUnavailable, "cannot append to " + dir + "/data/pg_hba.conf");
  }
  server->listen_addresses_ = options.listen_addresses;
  // A port picked now may be taken before the server binds it: then try another.
  Error last = Err(Errc::kUnavailable, "no attempt");
  for (int attempt = 0; attempt < 5; ++attempt) {
    RECKON_TRY(server->port_, FreePort());
    auto launched = server->Launch();
    if (launched) return server;
    last = launched.error();
    if (last.message().find("could not bind") == std::string::npos &&
        last.message().find("Address already in use") == std::string::npos) {
      break;
    }
  }
  return last;
}

// The data is deleted next: an immediate shutdown (SIGQUIT) skips the shutdown checkpoint,
// whose fsyncs of every test database cost seconds on a busy disk.
PostgresServer::~PostgresServer() { (void)Shutdown(SIGQUIT); }

Result<void> PostgresServer::Launch() {
  const std::string dir = dir_->path().string();
  const std::string postgres = bin_dir_ + "/postgres";
  const std::string log = dir + "/postgres.log";
  std::vector<std::string> args = {postgres,
                                   "-D", dir + "/data",
                                   "-p", std::to_string(port_),
                                   "-k", dir,
                                   "-c", "listen_addresses=" + listen_addresses_,
                                   "-c", "fsync=on",
                                   "-c", "synchronous_commit=on",
                                   "-c", "shared_buffers=32MB",
                                   "-c", "max_connections=40",
                                   "-c", "logging_collector=off",
                                   // After a crash, one syncfs() instead of an fsync per file.
                                   "-c", "recovery_init_sync_method=syncfs"};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return Err(Errc::kUnavailable, "fork failed");
  if (pid == 0) {
    // The child: async-signal-safe calls only, until exec.
    const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (out < 0 || in < 0) ::_exit(126);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(out, 2);
    if (drop_privileges_) {
      if (::setgroups(0, nullptr) != 0 || ::setgid(gid_) != 0 || ::setuid(uid_) != 0) {
        ::_exit(126);
      }
    }
    // After setuid, which clears it.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(126);
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execv(postgres.c_str(), argv.data());
    ::_exit(127);
  }
  pid_ = pid;
  RECKON_TRY(bool ready, WaitReady());
  if (ready) return Ok();
  return Err(Errc::kUnavailable, "the test PostgreSQL did not start:\n" + LogTail());
}

Result<bool> PostgresServer::WaitReady() {
  const std::filesystem::path pid_file = dir_->path() / "data" / "postmaster.pid";
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    // postmaster.pid: line 1 the server's pid (a crashed server leaves its own file behind),
    // line 8 its status, "ready" once it accepts connections.
    std::istringstream lines(ReadFile(pid_file));
    std::string first, line;
    std::getline(lines, first);
    for (int i = 1; i < 8 && std::getline(lines, line); ++i) {
    }
    if (first == std::to_string(pid_) && line.starts_with("ready")) return true;
    std::this_thread::sleep_for(20ms);
  }
  return Err(Errc::kDeadlineExceeded,
             "the test PostgreSQL was not ready after 60 s:\n" + LogTail());
}

Result<void> PostgresServer::KillAll() {
  if (pid_ <= 0) return Ok();
  // Stopped first, the postmaster forks no backend (an autovacuum worker, a new session)
  // between the listing of its children and the kill: one that escaped would outlive it,
  // keep its shared memory attached, and make the next start refuse the data directory.
  ::kill(pid_, SIGSTOP);
  const std::vector<pid_t> backends = ChildrenOf(pid_);
  for (pid_t backend : backends) ::kill(backend, SIGKILL);
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  for (pid_t backend : backends) {
    while (!Gone(backend) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(10ms);
    }
  }
  return Ok();
}

Result<void> PostgresServer::Crash() { return KillAll(); }

Result<pid_t> PostgresServer::KillChild(std::size_t pick) {
  if (pid_ <= 0) return Err(Errc::kFailedPrecondition, "the test PostgreSQL is not running");
  const std::vector<pid_t> children = ChildrenOf(pid_);
  if (children.empty()) {
    return Err(Errc::kFailedPrecondition, "the test PostgreSQL has no child to kill");
  }
  const pid_t child = children[pick % children.size()];
  ::kill(child, SIGKILL);
  // Reaped by the postmaster, which starts its reset in the same step: from then on, new
  // sessions are refused until recovery ends.
  const std::string proc = "/proc/" + std::to_string(child);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::filesystem::exists(proc)) {
    if (std::chrono::steady_clock::now() > deadline) {
      return Err(Errc::kDeadlineExceeded, "the test PostgreSQL did not reap its child " +
                                              std::to_string(child) + " in 10 s");
    }
    std::this_thread::sleep_for(1ms);
  }
  return child;
}

Result<void> PostgresServer::Stop() { return Shutdown(SIGINT); }

Result<void> PostgresServer::Shutdown(int signal) {
  if (pid_ <= 0) return Ok();
  ::kill(pid_, signal);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      return Ok();
    }
    std::this_thread::sleep_for(10ms);
  }
  return KillAll();
}

Result<void> PostgresServer::Restart() {
  if (pid_ > 0) return Err(Errc::kFailedPrecondition, "the test PostgreSQL is still running");
  return Launch();
}

Result<std::string> PostgresServer::CreateDatabase(const std::string& name) {
  if (name.empty() || name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") !=
                          std::string::npos) {
    return Err(Errc::kInvalidArgument, "database name '" + name + "': use a-z, 0-9 and _");
  }
  RECKON_TRY(RunToCompletion(bin_dir_ + "/psql",
                             {"-X", "-q", "-v", "ON_ERROR_STOP=1", "-d",
                              ConnectionString("postgres"), "-c",
                              "CREATE DATABASE " + name},
                             dir_->path().string() + "/psql.log"));
  return ConnectionString(name);
}

std::string PostgresServer::ConnectionString(const std::string& database) const {
  return "postgresql://" + user_ + "@127.0.0.1:" + std::to_string(port_) + "/" + database;
}

std::string PostgresServer::LogTail() const {
  return Tail(ReadFile(dir_->path() / "postgres.log"), 30);
}

}  // namespace reckon::testing
