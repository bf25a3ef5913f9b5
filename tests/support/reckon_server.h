// ReckonServer: a real `reckon server` on 127.0.0.1 (a port of its choosing) over a journal in
// its own temporary directory, the worker processes started against it, and the CLI pointed at
// it: what tests of server mode through the real binaries share.
//
// Credentials: the server's first start writes the admin token; Start() then creates one
// principal per role (operator, approver, reader, worker), each named after its role, with
// its token in <dir>/<role>.token. Cli() presents the token of the role its subcommand needs
// (start/signal/cancel: operator; approve/deny/resolve: approver; auth: admin; the rest:
// reader) unless the arguments name a --token-file; workers get the worker token through
// $RECKON_TOKEN_FILE.
//
// TLS (ReckonServerOptions::tls): the server gets fresh test certificates
// (tests/support/test_certs.h) with --tls-cert/--tls-key, and --client-ca too with `mtls`;
// the CLI and workers get $RECKON_CA, and with `mtls` $RECKON_CERT and $RECKON_KEY (the
// client certificate), so tests pass the same arguments either way.
//
// Ownership: owns the directory and every process it started; the destructor SIGKILLs what is
// still running (Stop() ends them gracefully first). Not thread-safe. Each process's stderr goes
// to a file in dir() (server.log, <worker name>.log, cli-<n>.err), for failure messages.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "reckon/base/error.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_certs.h"
#include "tests/support/temp_dir.h"

namespace reckon::testing {

// How one CLI call ended and what it wrote.
struct CliRun {
  ExitStatus status;
  std::string out;
  std::string err;
  int code() const { return status.exited ? status.code : 128 + status.signal; }
  // For failure messages: the exit status, stdout and stderr.
  std::string Describe() const;
};

struct ReckonServerOptions {
  std::vector<std::string> extra_args;  // appended to `reckon server ...`
  // The --journal argument; empty: <dir>/journal.db. Another (a postgresql:// URL) gets
  // --admin-token-file <dir>/journal.db.admin-token and --trace <dir>/journal.db.trace.jsonl,
  // so the token files are where they are for a SQLite journal.
  std::string journal;
  bool tls = false;
  bool mtls = false;  // implies tls
};

class ReckonServer {
 public:
  // Runs `reckon_path server --journal <dir>/journal.db --listen 127.0.0.1:0 ...` plus
  // `extra_args`, and waits until it listens (at most 30 s; else kDeadlineExceeded with its log).
  static Result<std::unique_ptr<ReckonServer>> Start(std::string reckon_path,
                                                     std::vector<std::string> extra_args = {});
  static Result<std::unique_ptr<ReckonServer>> Start(std::string reckon_path,
                                                     ReckonServerOptions options);
  ~ReckonServer();
  ReckonServer(const ReckonServer&) = delete;
  ReckonServer& operator=(const ReckonServer&) = delete;

  // Starts `path --server ADDRESS args...`; its stderr goes to <dir>/<name>.log.
  Result<void> StartWorker(const std::string& path, const std::string& name,
                           std::vector<std::string> args = {});

  // SIGTERMs the worker started as `name` and reaps it (Stop() skips it afterwards).
  // kNotFound for a name never started; kInternal if it did not exit with code 0.
  Result<void> StopWorker(const std::string& name);
  // SIGKILLs the worker started as `name` and reaps it: a crash, nothing said to the server.
  // kNotFound for a name never started.
  Result<void> KillWorker(const std::string& name);

  // Runs `reckon args... --server ADDRESS` until it exits (kill after `timeout`).
  CliRun Cli(std::vector<std::string> args,
             std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // Starts `reckon args... --server ADDRESS` (tokens as Cli()) and returns without waiting,
  // for a call that blocks until something else happens; its stdout is a pipe to read.
  Result<Subprocess> StartCli(std::vector<std::string> args);
  // `reckon start ID --type TYPE --input INPUT`, repeated while no connected worker hosts TYPE
  // yet (a worker that has just started may still be registering), for at most 30 s.
  CliRun StartWorkflow(const std::string& workflow_id, const std::string& type,
                       const std::string& input_json);

  // SIGKILLs the server and reaps it; the workers stay up and reconnect by themselves once it
  // is back. kFailedPrecondition if it is not running.
  Result<void> KillServer();
  // Starts the server again (after KillServer) with the same arguments, journal and port, and
  // waits until it listens, as Start() does. Its log goes on in server.log after a line
  // "=== server life N".
  Result<void> RestartServer();

  // SIGTERM to the workers, then to the server; afterwards the journal is free to open.
  // Errc::kInternal naming a process that did not exit with code 0.
  Result<void> Stop();

  const std::string& address() const { return address_; }
  // The server process's id while it runs (0 when it does not): for /proc/<pid>/status.
  pid_t server_pid() const { return server_ && server_->running() ? server_->pid() : 0; }
  // The token file of `role` ("admin", "operator", "approver", "reader", "worker").
  std::string TokenFile(const std::string& role) const;
  std::string journal_path() const { return dir_.File("journal.db"); }
  const TempDir& dir() const { return dir_; }
  // With TLS: the certificates (the server's, the CA every client trusts, a client's).
  const std::optional<TestCertificates>& certificates() const { return certificates_; }
  // What the CLI and workers get added to their environment ($RECKON_CA, ... with TLS).
  const std::vector<std::pair<std::string, std::string>>& client_env() const {
    return client_env_;
  }

 private:
  explicit ReckonServer(std::string reckon_path) : reckon_path_(std::move(reckon_path)) {}
  // Starts `reckon_path_ server_args_` and waits for the port file.
  Result<void> Launch();

  std::string reckon_path_;
  TempDir dir_;
  std::optional<Subprocess> server_;
  std::vector<std::string> server_args_;  // the port is fixed after the first life
  int server_lives_ = 0;
  std::vector<std::pair<std::string, Subprocess>> workers_;  // by name
  std::string address_;
  int cli_calls_ = 0;
  std::optional<TestCertificates> certificates_;
  std::vector<std::pair<std::string, std::string>> client_env_;
};

// How one `reckon server` start went, for tests of what a server refuses at start: it served
// (wrote its port file), or it ended by itself first (with `status`). `log` is its stderr.
struct ServerStart {
  bool served = false;
  ExitStatus status;
  std::string log;
};

// Runs `reckon_path server args...` with `--port-file <dir>/<name>.port` and its stderr in
// <dir>/<name>.log, and waits (at most 30 s) until it serves or ends; if it neither served nor
// ended, waits 10 s more for it to end. One that serves is left running in `process`, for
// the caller to stop; one that ended is reaped.
ServerStart StartServerOnce(const std::string& reckon_path, const TempDir& dir,
                            const std::string& name, std::vector<std::string> args,
                            std::optional<Subprocess>& process);

// Calls `check` every 20 ms until it returns true (true), or until `timeout` passes (false).
bool Eventually(const std::function<bool()>& check,
                std::chrono::milliseconds timeout = std::chrono::seconds(30));

}  // namespace reckon::testing
