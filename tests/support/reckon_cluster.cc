#include "tests/support/reckon_cluster.h"

#include <boost/json.hpp>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/support/crash_support.h"
#include "tests/support/role_tokens.h"

namespace reckon::testing {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

void Append(const fs::path& path, const std::string& text) {
  if (!text.empty()) std::ofstream(path, std::ios::app) << text;
}

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::int64_t NumberField(const json::object& object, const char* name) {
  const json::value* value = object.if_contains(name);
  return value != nullptr && value->is_number() ? value->to_number<std::int64_t>() : 0;
}

std::string StringField(const json::object& object, const char* name) {
  const json::value* value = object.if_contains(name);
  return value != nullptr && value->is_string() ? std::string(value->as_string()) : std::string();
}

ShardLease LeaseOf(const json::object& object) {
  ShardLease lease;
  lease.shard = object.if_contains("shard") ? static_cast<int>(NumberField(object, "shard")) : -1;
  lease.owner = StringField(object, "owner");
  lease.address = StringField(object, "address");
  lease.epoch = NumberField(object, "epoch");
  lease.expires_in_ms = NumberField(object, "expires_in_ms");
  return lease;
}

}  // namespace

Result<std::vector<ShardLease>> ParseShardLeases(const std::string& text) {
  std::vector<ShardLease> leases;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    boost::system::error_code ec;
    json::value parsed = json::parse(line, ec);
    if (ec || !parsed.is_object()) {
      return Err(Errc::kInternal, "`reckon cluster --json` printed a line that is no JSON "
                                  "object: " + line);
    }
    ShardLease lease = LeaseOf(parsed.as_object());
    if (lease.shard < 0) return Err(Errc::kInternal, "a lease without a shard: " + line);
    leases.push_back(std::move(lease));
  }
  return leases;
}

Result<std::unique_ptr<ReckonCluster>> ReckonCluster::Start(std::string reckon_path,
                                                            ReckonClusterOptions options) {
  if (options.servers < 1 || options.journal.empty() || options.dir.empty()) {
    return Err(Errc::kInvalidArgument, "ReckonCluster needs servers >= 1, a journal and a dir");
  }
  std::unique_ptr<ReckonCluster> cluster(
      new ReckonCluster(std::move(reckon_path), std::move(options)));
  const ReckonClusterOptions& o = cluster->options_;
  cluster->servers_.resize(static_cast<std::size_t>(o.servers));
  for (int i = 0; i < o.servers; ++i) {
    Server& server = cluster->servers_[static_cast<std::size_t>(i)];
    std::string journal = o.journal;
    if (auto placed = o.placements.find(i); placed != o.placements.end()) {
      server.prefix = placed->second.prefix;
      server.host = placed->second.host;
      if (!placed->second.journal.empty()) journal = placed->second.journal;
    }
    server.args = {"server", "--journal", journal, "--listen", server.host + ":0",
                   "--port-file", cluster->PortFile(i).string(),
                   "--cluster", "--shard-lease-ms", std::to_string(o.lease_ms),
                   "--server-id", cluster->server_id(i),
                   "--admin-token-file", cluster->TokenFile("admin"),
                   "--trace", (o.dir / ("server-" + std::to_string(i) + ".trace.jsonl")).string()};
    if (o.quiet) server.args.push_back("--quiet");
    server.args.insert(server.args.end(), o.extra_args.begin(), o.extra_args.end());
  }
  // Server 0 alone first: its first start writes the admin token the principals are made with.
  RECKON_TRY(cluster->Launch(0));
  RECKON_TRY(cluster->WaitReady(0));
  RECKON_TRY(IssueRoleTokens(cluster->reckon_path_, cluster->address(0),
                             cluster->TokenFile("admin"), o.dir.string()));
  for (int i = 1; i < o.servers; ++i) {
    RECKON_TRY(cluster->Launch(i));
  }
  for (int i = 1; i < o.servers; ++i) {
    RECKON_TRY(cluster->WaitReady(i));
  }
  return cluster;
}

ReckonCluster::~ReckonCluster() = default;  // each Subprocess SIGKILLs and reaps its child

fs::path ReckonCluster::log(int i) const {
  return options_.dir / ("server-" + std::to_string(i) + ".log");
}

fs::path ReckonCluster::PortFile(int i) const {
  return options_.dir / ("server-" + std::to_string(i) + ".port");
}

std::string ReckonCluster::TokenFile(const std::string& role) const {
  return RoleTokenFile(options_.dir.string(), role);
}

int ReckonCluster::IndexOf(const ShardLease& lease) const {
  for (int i = 0; i < size(); ++i) {
    if (!lease.owner.empty() && lease.owner == server_id(i)) return i;
  }
  for (int i = 0; i < size(); ++i) {
    if (!lease.address.empty() && lease.address == address(i)) return i;
  }
  return -1;
}

Result<void> ReckonCluster::Launch(int i) {
  Server& server = servers_[static_cast<std::size_t>(i)];
  if (server.process && server.process->running()) {
    return Err(Errc::kFailedPrecondition, server_id(i) + " is still running");
  }
  std::error_code ignored;
  fs::remove(PortFile(i), ignored);
  SubprocessOptions options;
  std::string program = reckon_path_;
  if (!server.prefix.empty()) {
    program = server.prefix.front();
    options.args.assign(server.prefix.begin() + 1, server.prefix.end());
    options.args.push_back(reckon_path_);
  }
  options.args.insert(options.args.end(), server.args.begin(), server.args.end());
  options.stderr_path = log(i).string();
  Append(log(i), "=== " + server_id(i) + " life " + std::to_string(++server.lives) + "\n");
  RECKON_TRY(Subprocess process, Subprocess::Start(program, std::move(options)));
  server.process.emplace(std::move(process));
  return Ok();
}

Result<void> ReckonCluster::WaitReady(int i, std::chrono::milliseconds timeout) {
  Server& server = servers_[static_cast<std::size_t>(i)];
  const SteadyClock::time_point deadline = SteadyClock::now() + timeout;
  const std::string life = server_id(i) + " life " + std::to_string(server.lives);
  for (;;) {
    DrainOutputs();
    std::ifstream in(PortFile(i));
    int port = 0;
    if (in >> port && port > 0) {
      const std::string address = server.host + ":" + std::to_string(port);
      if (!server.address.empty() && address != server.address) {
        return Err(Errc::kInternal, life + " listens on " + address + ", not " + server.address);
      }
      if (server.address.empty()) {
        server.address = address;
        // Later lives listen on the port of the first.
        std::replace(server.args.begin(), server.args.end(), server.host + ":0", address);
      }
      return Ok();
    }
    if (std::optional<ExitStatus> ended = Ended(i)) {
      return Err(Errc::kInternal, life + " " + ended->ToString() + " before it listened:\n" +
                                      Tail(log(i)));
    }
    if (SteadyClock::now() >= deadline) {
      return Err(Errc::kDeadlineExceeded,
                 life + " did not write its port file in time:\n" + Tail(log(i)));
    }
    std::this_thread::sleep_for(10ms);
  }
}

std::optional<ExitStatus> ReckonCluster::Ended(int i) {
  std::optional<Subprocess>& process = servers_[static_cast<std::size_t>(i)].process;
  if (!process) return std::nullopt;
  Result<ExitStatus> status = process->WaitFor(0ms);  // a reaped child: its remembered status
  if (status) return status.value();
  return std::nullopt;
}

Result<void> ReckonCluster::Kill(int i) {
  std::optional<Subprocess>& process = servers_[static_cast<std::size_t>(i)].process;
  const std::string life = server_id(i) + " life " + std::to_string(lives(i));
  if (!process) return Err(Errc::kFailedPrecondition, life + " was never started");
  if (std::optional<ExitStatus> ended = Ended(i)) {
    return Err(Errc::kInternal, life + " " + ended->ToString() + " by itself before the kill");
  }
  RECKON_TRY(process->Kill(SIGKILL));
  RECKON_TRY(ExitStatus status, process->Wait());
  DrainOutputs();
  if (!status.KilledBy(SIGKILL)) {
    return Err(Errc::kInternal, life + " " + status.ToString() + " by itself before the kill");
  }
  return Ok();
}

Result<void> ReckonCluster::Pause(int i) {
  std::optional<Subprocess>& process = servers_[static_cast<std::size_t>(i)].process;
  if (!process) return Err(Errc::kFailedPrecondition, server_id(i) + " was never started");
  return process->Kill(SIGSTOP);
}

Result<void> ReckonCluster::Resume(int i) {
  std::optional<Subprocess>& process = servers_[static_cast<std::size_t>(i)].process;
  if (!process) return Err(Errc::kFailedPrecondition, server_id(i) + " was never started");
  return process->Kill(SIGCONT);
}

Result<ExitStatus> ReckonCluster::Terminate(int i, std::chrono::milliseconds grace) {
  std::optional<Subprocess>& process = servers_[static_cast<std::size_t>(i)].process;
  if (!process) return Err(Errc::kFailedPrecondition, server_id(i) + " was never started");
  Result<ExitStatus> status = process->Terminate(grace);
  DrainOutputs();
  return status;
}

Result<void> ReckonCluster::Stop() {
  for (int i = 0; i < size(); ++i) {
    if (!process(i)) continue;
    RECKON_TRY(ExitStatus status, Terminate(i));
    if (!status.Succeeded()) {
      return Err(Errc::kInternal, server_id(i) + " life " + std::to_string(lives(i)) + " " +
                                      status.ToString() + " on SIGTERM:\n" + Tail(log(i)));
    }
  }
  return Ok();
}

void ReckonCluster::DrainOutputs() {
  for (int i = 0; i < size(); ++i) {
    std::optional<Subprocess>& process = servers_[static_cast<std::size_t>(i)].process;
    if (!process) continue;
    std::string lines;
    for (;;) {
      Result<std::string> line = process->ReadLine(0ms);
      if (!line) break;
      lines += line.value() + "\n";
    }
    Append(options_.dir / ("server-" + std::to_string(i) + ".stdout.log"), lines);
  }
}

std::vector<std::string> ReckonCluster::ServerFlags() const {
  std::vector<std::string> flags;
  for (int i = 0; i < size(); ++i) {
    flags.push_back("--server");
    flags.push_back(address(i));
  }
  return flags;
}

Result<Subprocess> ReckonCluster::StartWorker(const std::string& path, const std::string& name,
                                              std::vector<std::string> args) const {
  SubprocessOptions options;
  options.args = ServerFlags();
  options.args.insert(options.args.end(), args.begin(), args.end());
  options.stderr_path = (options_.dir / (name + ".log")).string();
  options.env.emplace_back("RECKON_TOKEN_FILE", TokenFile("worker"));
  return Subprocess::Start(path, std::move(options));
}

std::vector<std::string> ReckonCluster::WithCredentials(int server,
                                                        std::vector<std::string> args) const {
  args.push_back("--token-file");
  args.push_back(TokenFile(RoleForCommand(args)));
  args.push_back("--server");
  args.push_back(address(server));
  return args;
}

CliRun ReckonCluster::Cli(int server, std::vector<std::string> args,
                          std::chrono::milliseconds timeout) {
  const fs::path err = options_.dir / "cli.current.err";
  std::error_code ignored;
  fs::remove(err, ignored);
  SubprocessOptions options;
  const std::string shown = [&args, server] {
    std::string text = "reckon";
    for (const std::string& arg : args) text += " " + arg;
    return text + " (server " + std::to_string(server) + ")";
  }();
  options.args = WithCredentials(server, std::move(args));
  options.stderr_path = err.string();
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
  run.err = ReadText(err);
  if (!out) run.err += "\n(" + out.error().ToString() + ")";
  Append(options_.dir / "cli.log", "=== " + std::to_string(++cli_calls_) + ": " + shown + ": " +
                                       run.status.ToString() + "\n" + run.err);
  return run;
}

Result<Subprocess> ReckonCluster::StartCli(int server, std::vector<std::string> args,
                                           const std::string& stderr_name) {
  SubprocessOptions options;
  options.args = WithCredentials(server, std::move(args));
  options.stderr_path = (options_.dir / stderr_name).string();
  return Subprocess::Start(reckon_path_, std::move(options));
}

Result<std::string> ReckonCluster::ClusterCommand(std::vector<std::string> args) {
  std::vector<std::string> full = {"cluster", "--journal", options_.journal, "--json"};
  full.insert(full.end(), args.begin(), args.end());
  SubprocessOptions options;
  options.args = std::move(full);
  const fs::path err = options_.dir / "cluster-cli.err";
  options.stderr_path = err.string();
  RECKON_TRY(Subprocess process, Subprocess::Start(reckon_path_, std::move(options)));
  RECKON_TRY(std::string out, process.ReadAll(30s));
  RECKON_TRY(ExitStatus status, process.Wait());
  if (!status.Succeeded()) {
    return Err(Errc::kInternal, "`reckon cluster --journal ... --json` " + status.ToString() +
                                    ":\n" + out + Tail(err, 1500));
  }
  return out;
}

Result<std::vector<ShardLease>> ReckonCluster::Leases() {
  RECKON_TRY(std::string out, ClusterCommand({}));
  return ParseShardLeases(out);
}

Result<ShardLease> ReckonCluster::OwnerOf(const std::string& workflow_id) {
  RECKON_TRY(std::string out, ClusterCommand({"--workflow", workflow_id}));
  RECKON_TRY(std::vector<ShardLease> leases, ParseShardLeases(out));
  if (leases.size() != 1) {
    return Err(Errc::kInternal, "`reckon cluster --workflow " + workflow_id +
                                    " --json` answered " + std::to_string(leases.size()) +
                                    " leases: " + out);
  }
  return leases.front();
}

}  // namespace reckon::testing
