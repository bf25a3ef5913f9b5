// Killing a test's private PostgreSQL server (tests/support/postgres_server.h) the two ways the
// kill tests draw: the whole server (postmaster and every child; the test restarts it), or one
// child, as an out-of-memory kill would (the server resets its sessions and recovers itself).
// KillTimer does it after a delay, on a thread of its own, while the test's thread appends.
#pragma once

#include <chrono>
#include <cstddef>
#include <thread>

#include "reckon/base/error.h"
#include "tests/support/postgres_server.h"

namespace reckon::testing {

enum class Kill { kServer, kChild };

// kChild: the child at `pick` (modulo their number).
inline Result<void> KillNow(PostgresServer& server, Kill kill, std::size_t pick) {
  if (kill == Kill::kServer) return server.Crash();
  RECKON_TRY(server.KillChild(pick));
  return Ok();
}

// Kills after `delay`. The test's thread leaves the server alone until Join() (PostgresServer
// is not thread-safe), and restarts it itself: the server dies with the thread that started it.
class KillTimer {
 public:
  KillTimer(PostgresServer& server, Kill kill, std::size_t pick, std::chrono::microseconds delay)
      : thread_([&server, kill, pick, delay, this] {
          std::this_thread::sleep_for(delay);
          result_ = KillNow(server, kill, pick);
        }) {}
  Result<void> Join() {
    thread_.join();
    return result_;
  }

 private:
  Result<void> result_ = Ok();
  std::thread thread_;
};

}  // namespace reckon::testing
