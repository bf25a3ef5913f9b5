// AcceptLoop: the one accept loop of every listener Reckon runs (the wire server, the HTTP
// server, the embedded host's metrics listener). It owns a TCP acceptor, accepts on it until
// Stop(), and hands each accepted socket to the caller.
//
// Back-off: a connection waiting in the backlog keeps the acceptor readable, so an accept that
// fails for lack of resources (EMFILE, ENFILE: out of file descriptors; ENOBUFS, ENOMEM: out
// of kernel memory) would fail again at once and turn the loop into a busy loop. After such a
// failure the loop waits before the next attempt, first `AcceptBackoff::first`, doubling up to
// `AcceptBackoff::cap`, until an accept succeeds. Any other failure that is not about one
// connection (an error we do not expect) is treated the same. A failure about one connection
// (it was reset or aborted before we took it) is retried at once, as it costs one attempt.
//
// Logging: one warning when an episode of failures begins (what failed and what to do about
// it) and one line when accepts succeed again (how many failed and for how long), never one
// line per failure. `name` prefixes each line ("http", "wire", "metrics").
//
// Ownership and threads: it owns the acceptor and its back-off timer. Run() takes a shared_ptr
// to it, so the loop's state lives as long as the coroutine, whoever else lets go. Everything
// runs on the acceptor's executor, which must be single-threaded (a strand or an io_context
// run by one thread); counts() alone may be read from any thread.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/system/error_code.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace reckon {

struct AcceptBackoff {
  std::chrono::milliseconds first{10};  // the wait after the first failure of an episode
  std::chrono::milliseconds cap{1000};  // the longest wait; also the longest delay after the
                                        // resources are back before a waiting peer is served
};

// What the loop has done so far, for tests and diagnostics.
struct AcceptCounts {
  std::uint64_t attempts = 0;  // accepts completed, failed or not
  std::uint64_t failures = 0;  // of them, failed
  std::uint64_t episodes = 0;  // runs of failures that made the loop back off
};

// Whether a failed accept says the process or the system lacks resources (the back-off case).
bool IsResourceExhaustion(const boost::system::error_code& ec);
// Whether a failed accept concerns only the connection it was taking (retried at once).
bool IsConnectionLevel(const boost::system::error_code& ec);

class AcceptLoop {
 public:
  // Called with each accepted socket, on the acceptor's executor.
  using Handler = std::function<void(boost::asio::ip::tcp::socket)>;

  AcceptLoop(boost::asio::any_io_executor executor, std::string name, AcceptBackoff backoff = {});
  AcceptLoop(const AcceptLoop&) = delete;
  AcceptLoop& operator=(const AcceptLoop&) = delete;

  // To open, bind and listen before Run().
  boost::asio::ip::tcp::acceptor& acceptor() { return acceptor_; }

  // Accepts until Stop() (or until the acceptor is closed), handing each socket to `handler`.
  // Co_spawn it on the acceptor's executor; it never throws for a failed accept.
  static boost::asio::awaitable<void> Run(std::shared_ptr<AcceptLoop> loop, Handler handler);

  // Closes the acceptor and ends a back-off wait: Run() returns at its next resumption and
  // hands over no further socket. Idempotent.
  void Stop();
  bool stopped() const { return stopped_; }

  AcceptCounts counts() const;

 private:
  // After a failed accept: counts it, logs at the start of an episode, waits if it should.
  boost::asio::awaitable<void> Failed(const boost::system::error_code& ec);
  void Succeeded();

  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer timer_;
  std::string name_;
  AcceptBackoff backoff_;
  bool stopped_ = false;
  // The current episode of failures: none while next_wait_ is zero.
  std::chrono::milliseconds next_wait_{0};
  std::uint64_t episode_failures_ = 0;
  std::chrono::steady_clock::time_point episode_began_;
  std::atomic<std::uint64_t> attempts_{0};
  std::atomic<std::uint64_t> failures_{0};
  std::atomic<std::uint64_t> episodes_{0};
};

}  // namespace reckon
