// PostgresServer: a private PostgreSQL 15 server for tests, on 127.0.0.1 and a port of its
// own, with its data directory and unix socket directory in a temporary directory it owns.
//
// Start() runs the Debian `postgresql-15` binaries (/usr/lib/postgresql/15/bin, or
// $RECKON_POSTGRES_BIN). Tests run as root and PostgreSQL refuses to: as root, the server runs
// as a dedicated unprivileged system user (PostgresServerOptions::user, created with
// `useradd --system` if missing; initdb through `runuser -u USER --`, postgres started by a
// child that drops to that user); as anyone else, as the caller. initdb uses trust
// authentication (loopback and the private socket only), locale C and UTF-8, and data
// checksums on (as Reckon asks of production clusters, docs/ARCHITECTURE.md decision 56);
// the server runs with fsync on. When PostgreSQL is not installed, Start() fails with kFailedPrecondition
// naming `./dev`, so a test fails with that message instead of being skipped.
//
// Ownership: owns the directory and the server process. The destructor stops the server with
// an immediate shutdown (SIGQUIT: the sessions end, no checkpoint, since the data is deleted
// next; SIGKILL of it and its backends after 10 s) and removes the directory.
// The server dies with the thread that started it (PR_SET_PDEATHSIG), so a crashed test binary
// leaves no server behind. Not thread-safe: one owner.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "reckon/base/error.h"
#include "tests/support/temp_dir.h"

namespace reckon::testing {

struct PostgresServerOptions {
  std::string bin_dir;              // empty: $RECKON_POSTGRES_BIN, else the Debian path
  std::string user = "reckon-pg";   // the system user the server runs as when we are root
  // Addresses it listens on (PostgreSQL's listen_addresses; each must exist when it starts),
  // and networks (CIDR) trusted besides loopback, e.g. a test's network namespace.
  std::string listen_addresses = "127.0.0.1";
  std::vector<std::string> trusted_networks;
  // initdb --data-checksums: PostgreSQL verifies every page it reads. Off only for the tests
  // of what Reckon says about a cluster without them.
  bool data_checksums = true;
};

class PostgresServer {
 public:
  // initdb, start, wait until it accepts connections (at most 60 s). Errors carry the tail
  // of the server's log.
  static Result<std::unique_ptr<PostgresServer>> Start(PostgresServerOptions options = {});
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // Creates the database `name` (letters, digits, '_') and returns its connection string.
  Result<std::string> CreateDatabase(const std::string& name);
  // "postgresql://USER@127.0.0.1:PORT/DATABASE".
  std::string ConnectionString(const std::string& database) const;

  // A crash: SIGKILL to the server and each of its backends, without a shutdown. Connections
  // are cut; what was committed stays (the server recovers it from its WAL at the next start).
  Result<void> Crash();
  // SIGKILL to one child of the server (the `pick`-th, modulo their number: a session's
  // backend or an auxiliary process such as the WAL writer), returning its pid once the
  // server has reaped it. The server then resets by itself (restart_after_crash): it ends
  // every session, refuses connections while it recovers from its WAL, and accepts them
  // again, keeping its pid; no Restart() is needed. kFailedPrecondition when it is not
  // running or has no child. Callable from another thread while the owner leaves the
  // server alone.
  Result<pid_t> KillChild(std::size_t pick);
  // A fast shutdown (SIGINT), waiting up to 10 s, then as Crash().
  Result<void> Stop();
  // Starts the server again on the same data directory and port, after Crash() or Stop().
  Result<void> Restart();

  int port() const { return port_; }
  bool running() const { return pid_ > 0; }
  // The last lines of the server's log, for failure messages.
  std::string LogTail() const;

 private:
  PostgresServer() = default;
  Result<void> Launch();          // fork/exec postgres and wait until it is ready
  Result<bool> WaitReady();       // false: it exited (the log says why)
  Result<void> KillAll();
  // Sends `signal` (SIGINT: fast, SIGQUIT: immediate), waits 10 s, then KillAll().
  Result<void> Shutdown(int signal);

  std::string bin_dir_;
  std::string user_;
  std::string listen_addresses_;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
  bool drop_privileges_ = false;
  std::unique_ptr<TempDir> dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace reckon::testing
