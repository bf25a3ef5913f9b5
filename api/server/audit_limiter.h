// AuditLimiter: keeps a flood of identical audit lines from one peer out of the server's log
// (a client that retries a refused request, or a refused TLS handshake, without pause). A line
// is known by its key: the peer's address without its port, and what the line says (the
// method and the reason). Of each key, at most `burst` lines are written per `window`; the
// first one written after a window in which some were held back carries how many were
// ("12 more like this from 127.0.0.1 suppressed"). Lines of other keys, of other peers
// included, are never held back by these.
//
// Memory: at most max_keys keys; when full, the key whose window started first is dropped
// (with one line saying how many of its lines were held back, if any).
//
// Threads: a plain value; the server's executor uses it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace reckon::api {

struct AuditLimits {
  std::size_t burst = 10;
  std::chrono::milliseconds window{60000};
  std::size_t max_keys = 4096;
};

class AuditLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  explicit AuditLimiter(AuditLimits limits = {}) : limits_(limits) {}

  // Whether to write the line of `key` at `now`: nullopt to hold it back; else the number of
  // lines of `key` held back since the last one written (0: none).
  std::optional<std::uint64_t> Admit(const std::string& key, Clock::time_point now);

  // What a written line appends for `held_back` lines of `peer` held back before it: "" for 0,
  // else " (N more like this from HOST suppressed)".
  static std::string Suppressed(std::uint64_t held_back, std::string_view peer);
  // "HOST" of "HOST:PORT" (the port of each connection differs; the host is the peer).
  static std::string_view HostOf(std::string_view peer);

 private:
  struct Window {
    Clock::time_point start;
    std::size_t written = 0;
    std::uint64_t held_back = 0;
  };
  void DropOldest();

  AuditLimits limits_;
  std::unordered_map<std::string, Window> windows_;
};

}  // namespace reckon::api
