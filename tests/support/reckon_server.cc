#include "tests/support/reckon_server.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/support/role_tokens.h"

namespace reckon::testing {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string CliRun::Describe() const {
  return status.ToString() + "\n--- stdout\n" + out + "--- stderr\n" + err;
}

bool Eventually(const std::function<bool()>& check, std::chrono::milliseconds timeout) {
  const SteadyClock::time_point deadline = SteadyClock::now() + timeout;
  for (;;) {
    if (check()) return true;
    if (SteadyClock::now() >= deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
}

ServerStart StartServerOnce(const std::string& reckon_path, const TempDir& dir,
                            const std::string& name, std::vector<std::string> args,
                            std::optional<Subprocess>& process) {
  SubprocessOptions options;
  options.args = {"server", "--port-file", dir.File(name + ".port")};
  options.args.insert(options.args.end(), args.begin(), args.end());
  options.stderr_path = dir.File(name + ".log");
  ServerStart start;
  auto started = Subprocess::Start(reckon_path, std::move(options));
  if (!started) {
    start.log = started.error().ToString();
    return start;
  }
  process.emplace(std::move(started).value());
  Eventually([&] {
    start.served = !ReadFile(dir.File(name + ".port")).empty();
    return start.served || static_cast<bool>(process->WaitFor(0ms));
  });
  if (!start.served) {
    auto ended = process->WaitFor(10s);
    if (ended) start.status = ended.value();
  }
  start.log = ReadFile(dir.File(name + ".log"));
  return start;
}

Result<std::unique_ptr<ReckonServer>> ReckonServer::Start(std::string reckon_path,
                                                          std::vector<std::string> extra_args) {
  ReckonServerOptions options;
  options.extra_args = std::move(extra_args);
  return Start(std::move(reckon_path), std::move(options));
}

Result<std::unique_ptr<ReckonServer>> ReckonServer::Start(std::string reckon_path,
                                                          ReckonServerOptions server_options) {
  std::unique_ptr<ReckonServer> server(new ReckonServer(std::move(reckon_path)));
  SubprocessOptions options;
  const std::string journal =
      server_options.journal.empty() ? server->journal_path() : server_options.journal;
  options.args = {"server", "--journal", journal, "--listen", "127.0.0.1:0",
                  "--port-file", server->dir_.File("port"), "--quiet"};
  if (!server_options.journal.empty()) {
    options.args.insert(options.args.end(),
                        {"--admin-token-file", server->journal_path() + ".admin-token", "--trace",
                         server->journal_path() + ".trace.jsonl"});
  }
  if (server_options.tls || server_options.mtls) {
    RECKON_TRY(TestCertificates certificates, WriteTestCertificates(server->dir_.path()));
    options.args.insert(options.args.end(), {"--tls-cert", certificates.server_cert,
                                             "--tls-key", certificates.server_key});
    server->client_env_.emplace_back("RECKON_CA", certificates.ca);
    if (server_options.mtls) {
      options.args.insert(options.args.end(), {"--client-ca", certificates.ca});
      server->client_env_.emplace_back("RECKON_CERT", certificates.client_cert);
      server->client_env_.emplace_back("RECKON_KEY", certificates.client_key);
    }
    server->certificates_ = std::move(certificates);
  }
  options.args.insert(options.args.end(), server_options.extra_args.begin(),
                      server_options.extra_args.end());
  server->server_args_ = std::move(options.args);
  RECKON_TRY(server->Launch());
  // Later lives listen on the port of the first: workers and the CLI were told that address.
  for (std::string& arg : server->server_args_) {
    if (arg == "127.0.0.1:0") arg = server->address_;
  }
  RECKON_TRY(IssueRoleTokens(server->reckon_path_, server->address_, server->TokenFile("admin"),
                             server->dir_.path().string(), server->client_env_));
  return server;
}

Result<void> ReckonServer::Launch() {
  std::error_code ignored;
  std::filesystem::remove(dir_.File("port"), ignored);
  SubprocessOptions options;
  options.args = server_args_;
  options.stderr_path = dir_.File("server.log");
  std::ofstream(options.stderr_path, std::ios::app)
      << "=== server life " << ++server_lives_ << "\n";
  RECKON_TRY(Subprocess process, Subprocess::Start(reckon_path_, std::move(options)));
  server_.emplace(std::move(process));
  int port = 0;
  const bool listening = Eventually(
      [&] {
        std::ifstream file(dir_.File("port"));
        if (static_cast<bool>(file >> port) && port > 0) return true;
        return static_cast<bool>(server_->WaitFor(0ms));  // it ended: no need to wait on
      },
      30s);
  if (!listening || port <= 0) {
    return Err(Errc::kDeadlineExceeded, "reckon server (life " + std::to_string(server_lives_) +
                                            ") did not write its port file:\n" +
                                            ReadFile(dir_.File("server.log")));
  }
  address_ = "127.0.0.1:" + std::to_string(port);
  return Ok();
}

Result<void> ReckonServer::KillServer() {
  if (!server_ || !server_->running()) {
    return Err(Errc::kFailedPrecondition, "reckon server is not running");
  }
  RECKON_TRY(server_->Kill(SIGKILL));
  RECKON_TRY(ExitStatus status, server_->Wait());
  (void)status;
  return Ok();
}

Result<void> ReckonServer::RestartServer() {
  if (server_ && server_->running()) {
    return Err(Errc::kFailedPrecondition, "reckon server is still running");
  }
  return Launch();
}

std::string ReckonServer::TokenFile(const std::string& role) const {
  if (role == "admin") return journal_path() + ".admin-token";
  return RoleTokenFile(dir_.path().string(), role);
}

ReckonServer::~ReckonServer() = default;  // each Subprocess SIGKILLs and reaps its child

Result<void> ReckonServer::StartWorker(const std::string& path, const std::string& name,
                                       std::vector<std::string> args) {
  SubprocessOptions options;
  options.args = {"--server", address_};
  options.args.insert(options.args.end(), args.begin(), args.end());
  options.stderr_path = dir_.File(name + ".log");
  options.env = client_env_;
  options.env.emplace_back("RECKON_TOKEN_FILE", TokenFile("worker"));
  RECKON_TRY(Subprocess process, Subprocess::Start(path, std::move(options)));
  workers_.emplace_back(name, std::move(process));
  return Ok();
}

CliRun ReckonServer::Cli(std::vector<std::string> args, std::chrono::milliseconds timeout) {
  if (std::find(args.begin(), args.end(), "--token-file") == args.end()) {
    const std::string role = RoleForCommand(args);
    args.push_back("--token-file");
    args.push_back(TokenFile(role));
  }
  args.push_back("--server");
  args.push_back(address_);
  SubprocessOptions options;
  options.args = std::move(args);
  options.env = client_env_;
  options.stderr_path = dir_.File("cli-" + std::to_string(++cli_calls_) + ".err");
  CliRun run;
  auto process = Subprocess::Start(reckon_path_, std::move(options));
  if (!process) {
    run.err = process.error().ToString();
    return run;
  }
  auto out = process.value().ReadAll(timeout);
  if (out) run.out = std::move(out).value();
  if (!out) (void)process.value().Kill();
  auto status = process.value().Wait();
  if (status) run.status = status.value();
  run.err = ReadFile(dir_.File("cli-" + std::to_string(cli_calls_) + ".err"));
  if (!out) run.err += "\n(" + out.error().ToString() + ")";
  return run;
}

Result<Subprocess> ReckonServer::StartCli(std::vector<std::string> args) {
  if (std::find(args.begin(), args.end(), "--token-file") == args.end()) {
    const std::string role = RoleForCommand(args);
    args.push_back("--token-file");
    args.push_back(TokenFile(role));
  }
  args.push_back("--server");
  args.push_back(address_);
  SubprocessOptions options;
  options.args = std::move(args);
  options.env = client_env_;
  options.stderr_path = dir_.File("cli-" + std::to_string(++cli_calls_) + ".err");
  return Subprocess::Start(reckon_path_, std::move(options));
}

CliRun ReckonServer::StartWorkflow(const std::string& workflow_id, const std::string& type,
                                   const std::string& input_json) {
  CliRun run;
  Eventually(
      [&] {
        run = Cli({"start", workflow_id, "--type", type, "--input", input_json});
        return run.code() != 1 || run.err.find("no connected worker") == std::string::npos;
      },
      30s);
  return run;
}

Result<void> ReckonServer::StopWorker(const std::string& name) {
  for (auto& [started, worker] : workers_) {
    if (started != name) continue;
    RECKON_TRY(ExitStatus status, worker.Terminate(10s));
    if (!status.Succeeded()) {
      return Err(Errc::kInternal, name + " " + status.ToString() + " on SIGTERM:\n" +
                                      ReadFile(dir_.File(name + ".log")));
    }
    return Ok();
  }
  return Err(Errc::kNotFound, "no worker named '" + name + "' was started");
}

Result<void> ReckonServer::KillWorker(const std::string& name) {
  for (auto& [started, worker] : workers_) {
    if (started != name || !worker.running()) continue;
    RECKON_TRY(worker.Kill(SIGKILL));
    RECKON_TRY(worker.Wait());
    return Ok();
  }
  return Err(Errc::kNotFound, "no running worker named '" + name + "' was started");
}

Result<void> ReckonServer::Stop() {
  for (auto& [name, worker] : workers_) {
    RECKON_TRY(ExitStatus status, worker.Terminate(10s));
    if (!status.Succeeded()) {
      return Err(Errc::kInternal, name + " " + status.ToString() + " on SIGTERM:\n" +
                                      ReadFile(dir_.File(name + ".log")));
    }
  }
  if (!server_) return Ok();
  RECKON_TRY(ExitStatus status, server_->Terminate(10s));
  if (!status.Succeeded()) {
    return Err(Errc::kInternal, "reckon server " + status.ToString() + " on SIGTERM:\n" +
                                    ReadFile(dir_.File("server.log")));
  }
  return Ok();
}

}  // namespace reckon::testing
