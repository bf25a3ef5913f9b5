// NatsServer: a real `nats-server` with JetStream (Debian's nats-server) for tests of the
// transactional outbox, started as a child process on a free port of 127.0.0.1 with its store
// in a directory of the test's: `nats-server -js -sd DIR -a 127.0.0.1 -p PORT`. A test can
// SIGKILL it and start it again on the same port and store directory (streams, messages,
// consumers and the duplicate window survive, as they do for an operator's broker), and
// declare streams through libnats the way an operator would.
//
// Readiness: Start() and Restart() return once a NATS client can connect (at most
// `ready_timeout`); the server's stderr goes to <dir>/nats-server.log, each life headed by a
// line "=== nats-server life N".
//
// Ownership: owns the child process (the Subprocess SIGKILLs and reaps it on destruction) and
// nothing else; admin calls open a short-lived client connection of their own, so they work
// across restarts. Not thread-safe: one test thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "reckon/base/error.h"
#include "tests/support/subprocess.h"

namespace reckon::testing {

struct NatsServerOptions {
  std::string program;         // path of nats-server (tests get it from CMake)
  std::filesystem::path dir;   // store under dir/jetstream, log in dir/nats-server.log
  std::chrono::milliseconds ready_timeout{10000};
};

// What a stream holds, from its info.
struct NatsStreamState {
  std::int64_t messages = 0;
  std::int64_t last_seq = 0;
};

class NatsServer {
 public:
  // Picks a free port and starts the broker. kNotFound if the program cannot be executed;
  // kDeadlineExceeded (with the log's tail) if no client could connect in time.
  static Result<std::unique_ptr<NatsServer>> Start(NatsServerOptions options);
  ~NatsServer();
  NatsServer(const NatsServer&) = delete;
  NatsServer& operator=(const NatsServer&) = delete;

  // SIGKILL, and waits until the process has ended. kFailedPrecondition if it is not running.
  Result<void> Kill();
  // Starts it again on the same port and store (after Kill or Stop) and waits until ready.
  Result<void> Restart();
  // SIGSTOP / SIGCONT: a broker that stalls (it holds what clients sent until it resumes), to
  // make a publish wait for its ack. kFailedPrecondition if it is not running.
  Result<void> Pause();
  Result<void> Resume();
  // SIGINT (nats-server's clean shutdown); it must exit with code 0 within 10 s (kInternal
  // otherwise, after a SIGKILL).
  Result<void> Stop();

  // Declares (or updates) a file-backed stream `name` over `subjects` whose duplicate window
  // is `duplicate_window`. Errors: kUnavailable (no connection), kInternal (JetStream refused,
  // with its error code).
  Result<void> AddStream(const std::string& name, const std::vector<std::string>& subjects,
                         std::chrono::milliseconds duplicate_window);
  Result<NatsStreamState> StreamState(const std::string& name);

  std::string url() const { return "nats://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  bool running() const { return process_ && process_->running(); }
  int lives() const { return lives_; }
  std::string log_path() const { return (options_.dir / "nats-server.log").string(); }

 private:
  explicit NatsServer(NatsServerOptions options) : options_(std::move(options)) {}
  Result<void> Launch();

  NatsServerOptions options_;
  int port_ = 0;
  int lives_ = 0;
  std::optional<Subprocess> process_;
};

// A port of 127.0.0.1 that was free a moment ago (bound to 0, then closed); -1 if none.
int FreeLoopbackPort();

}  // namespace reckon::testing
