// ReckonCluster: N `reckon server --cluster` processes on 127.0.0.1 sharing one PostgreSQL journal
// (docs/DEPLOYMENT.md, "Several nodes on PostgreSQL"), for the multi-server tests (cluster crash
// loop, fencing). The caller owns the database (tests/support/postgres_server.h) and passes its
// URL.
//
// Server i runs
//   reckon server --journal URL --listen 127.0.0.1:PORT --port-file <dir>/server-i.port
//                 --cluster --shard-lease-ms L --server-id server-i
//                 --admin-token-file <dir>/admin.token --trace <dir>/server-i.trace.jsonl
//                 [--quiet] <extra_args>
// Its first life listens on port 0; later lives on the port of the first (workers and the CLI
// were told that address). Its stderr goes to <dir>/server-i.log, after a line
// "=== server-i life N" per life; what it writes to stdout is drained into
// <dir>/server-i.stdout.log by DrainOutputs(), so the pipe never fills.
//
// Credentials: every server shares the database, hence its principals. Start() starts server 0
// alone first (its first start on the database writes the admin token), creates one principal
// per role through it (tests/support/role_tokens.h, tokens in <dir>/<role>.token), then starts
// the others. Cli() presents the token of the role its subcommand needs. No TLS: loopback only.
//
// The lease table is read with the real CLI (`reckon cluster --journal URL --json`: one JSON
// object per lease and line), as an operator would; Leases() and OwnerOf() parse it.
//
// Ownership: owns the server processes (the destructor SIGKILLs what still runs; Stop() ends
// them gracefully), not the directory, the database or the workers it starts for the caller
// (StartWorker returns the Subprocess). Not thread-safe: one test thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "reckon/base/error.h"
#include "tests/support/reckon_server.h"
#include "tests/support/subprocess.h"

namespace reckon::testing {

// Where one server runs when not beside the others (a partition test's network namespace).
struct ReckonClusterPlacement {
  // Runs `prefix... reckon server ...` (e.g. {"/usr/sbin/ip", "netns", "exec", "NS"}).
  std::vector<std::string> prefix;
  std::string host = "127.0.0.1";  // --listen HOST:0, and its address for clients
  std::string journal;             // its own --journal (the same database by another route)
};

struct ReckonClusterOptions {
  int servers = 3;
  std::string journal;        // postgresql://... (required)
  std::filesystem::path dir;  // must exist; logs, port files and tokens go there
  int lease_ms = 3000;        // --shard-lease-ms
  // --quiet: warnings and errors only. The cluster's info lines ("cluster: acquired shards",
  // "released shards ... to rebalance") need it off.
  bool quiet = true;
  std::vector<std::string> extra_args;  // appended to every `reckon server ...`
  std::map<int, ReckonClusterPlacement> placements;  // by server index; absent: as above
};

// One row of `reckon cluster --json`, or the answer of `--workflow ID --json`.
struct ShardLease {
  int shard = -1;
  std::string owner;    // server id; empty: no owner
  std::string address;  // where the owner serves
  std::int64_t epoch = 0;
  std::int64_t expires_in_ms = 0;
};

class ReckonCluster {
 public:
  // Starts every server as described above and waits until each serves (its port file; at
  // most 30 s each). Errors carry the log of the server that failed.
  static Result<std::unique_ptr<ReckonCluster>> Start(std::string reckon_path,
                                                      ReckonClusterOptions options);
  ~ReckonCluster();
  ReckonCluster(const ReckonCluster&) = delete;
  ReckonCluster& operator=(const ReckonCluster&) = delete;

  int size() const { return static_cast<int>(servers_.size()); }
  const std::string& journal() const { return options_.journal; }
  const std::filesystem::path& dir() const { return options_.dir; }
  // "HOST:PORT" of server i (fixed by its first life).
  const std::string& address(int i) const { return servers_[i].address; }
  std::string server_id(int i) const { return "server-" + std::to_string(i); }
  std::filesystem::path log(int i) const;
  int lives(int i) const { return servers_[i].lives; }
  // Server i's process (nullopt before its first life).
  std::optional<Subprocess>& process(int i) { return servers_[i].process; }
  // The server whose id or address `lease.owner` / `lease.address` names; -1 if none.
  int IndexOf(const ShardLease& lease) const;

  // --- lives -------------------------------------------------------------------------------
  // SIGKILL and reap. kInternal if it had ended by itself before (the status says how).
  Result<void> Kill(int i);
  // Starts a new life of server i (it must not be running) without waiting for it to serve.
  Result<void> Launch(int i);
  // Waits until the current life of server i wrote its port file (it recovered and serves).
  // kInternal if it ended first, kDeadlineExceeded after `timeout`; both quote its log.
  Result<void> WaitReady(int i, std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // SIGSTOP / SIGCONT: a paused process keeps its sockets but acts on nothing.
  Result<void> Pause(int i);
  Result<void> Resume(int i);
  // How server i's current life ended, if it has; nullopt while it runs.
  std::optional<ExitStatus> Ended(int i);
  // SIGTERM and wait up to `grace` (then SIGKILL): how it ended.
  Result<ExitStatus> Terminate(int i, std::chrono::milliseconds grace = std::chrono::seconds(10));
  // SIGTERM to every running server, in order; kInternal naming one that did not exit with 0.
  Result<void> Stop();
  // Moves what the servers wrote to stdout into their files.
  void DrainOutputs();

  // --- clients -----------------------------------------------------------------------------
  // `{"--server", address(0), "--server", address(1), ...}`: what a worker gets.
  std::vector<std::string> ServerFlags() const;
  // Starts `path <ServerFlags()> args...` with the worker token; stderr to <dir>/<name>.log.
  Result<Subprocess> StartWorker(const std::string& path, const std::string& name,
                                 std::vector<std::string> args) const;
  // Runs `reckon args... --token-file <role's> --server address(server)` until it exits
  // (killed after `timeout`); stderr in <dir>/cli.log (appended) and in CliRun::err.
  CliRun Cli(int server, std::vector<std::string> args,
             std::chrono::milliseconds timeout = std::chrono::seconds(40));
  // Starts the same command without waiting (e.g. against a paused server); the caller reads
  // its output and status from the Subprocess; its stderr goes to <dir>/<stderr_name>.
  Result<Subprocess> StartCli(int server, std::vector<std::string> args,
                              const std::string& stderr_name);
  // `reckon cluster --journal URL --json [args...]`, parsed. kInternal quoting the output when
  // it is not the JSON expected.
  Result<std::vector<ShardLease>> Leases();
  Result<ShardLease> OwnerOf(const std::string& workflow_id);
  std::string TokenFile(const std::string& role) const;

 private:
  struct Server {
    std::optional<Subprocess> process;
    std::vector<std::string> prefix;  // what runs `reckon`, if anything
    std::vector<std::string> args;
    std::string host = "127.0.0.1";
    std::string address;  // empty until the first life listens
    int lives = 0;
  };
  ReckonCluster(std::string reckon_path, ReckonClusterOptions options)
      : reckon_path_(std::move(reckon_path)), options_(std::move(options)) {}
  std::filesystem::path PortFile(int i) const;
  std::vector<std::string> WithCredentials(int server, std::vector<std::string> args) const;
  Result<std::string> ClusterCommand(std::vector<std::string> args);

  std::string reckon_path_;
  ReckonClusterOptions options_;
  std::vector<Server> servers_;
  int cli_calls_ = 0;
};

// Parses `reckon cluster --json` output: one lease object per line ({"shard", "owner",
// "address", "epoch", "expires_in_ms"}; --workflow adds "workflow_id"). No line: no lease.
Result<std::vector<ShardLease>> ParseShardLeases(const std::string& text);

}  // namespace reckon::testing
