// SocketDeadline: bounds a connection step (connect, the first byte, a TLS handshake) by
// cancelling the socket's operations when time runs out, which ends the pending one with
// operation_aborted; the socket stays open, so the caller may still say why before closing
// it. The caller asks expired() to tell a timeout from a failure.
//
// Watch() points it at the socket to close (again after the socket moved, e.g. into a TLS
// stream). Disarm() cancels it; from then on the socket is never touched, even by an expiry
// already queued, so the socket may be moved or destroyed. The destructor disarms.
//
// Threads: use on the executor given at construction, which must be single-threaded.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <memory>

namespace reckon::api {

class SocketDeadline {
 public:
  // `close_on_expiry`: close the socket rather than cancel its operations. For a connect over
  // several endpoints: after a cancel, Asio's range connect goes on to the next one.
  SocketDeadline(boost::asio::any_io_executor executor, std::chrono::milliseconds after,
                 bool close_on_expiry = false);
  ~SocketDeadline();
  SocketDeadline(const SocketDeadline&) = delete;
  SocketDeadline& operator=(const SocketDeadline&) = delete;

  void Watch(boost::asio::ip::tcp::socket& socket);
  void Disarm();
  bool expired() const { return state_->expired; }

 private:
  struct State {
    bool expired = false;
    bool close = false;
    boost::asio::ip::tcp::socket* socket = nullptr;  // not owned; null once disarmed
  };
  std::shared_ptr<State> state_;  // shared with the timer's handler
  boost::asio::steady_timer timer_;
};

}  // namespace reckon::api
