// Client: one connection to a `reckon server`, with many requests in flight.
//
// Call() sends a Request (the client fills in its id, timeout and credential) and completes with the
// matching Response, or with an error: the server's own error reply (its code and message),
// Errc::kDeadlineExceeded when the reply did not arrive in time (the request may still take
// effect: retry with the same ids), or Errc::kUnavailable when the connection is lost (every
// call in flight fails with it; connect again). When the server closes the connection for one of
// its limits it first says why (protocol/close_reason.h): every call in flight and every
// later call then fails with Errc::kUnavailable and that reason ("the reckon server at ADDRESS
// closed the connection: resource_exhausted: the server has 1024 connections, its maximum
// (--max-connections); retry later"). close_reason() keeps that reason with the server's own
// code (unauthenticated when the server ended the connection because its token was revoked or
// expired), for a caller that must tell a refusal from a lost connection.
//
// A server that refuses the client's TLS certificate (its --client-ca does not accept the
// --cert: another CA, expired; or it requires one and none was given) fails the connection
// with Errc::kUnavailable and a message that says so and what to check, whether the refusal
// comes during the handshake or right after it (TLS 1.3).
//
// Lifetime and threads: held by std::shared_ptr; all methods run on the executor given to
// Connect, which must be single-threaded.
#pragma once

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <capnp/message.h>
#include <capnp/serialize.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "reckon/protocol/frame_stream.h"
#include "reckon/protocol/reckon.capnp.h"
#include "reckon/protocol/tls.h"
#include "reckon/base/error.h"

namespace reckon::api {

// A Response read in place from its frame.
class Reply {
 public:
  Reply(Frame frame, const FrameLimits& limits);
  wire::Response::Reader get() const { return root_; }

 private:
  Frame frame_;
  std::unique_ptr<capnp::FlatArrayMessageReader> reader_;
  wire::Response::Reader root_;
};

// "127.0.0.1:7233" -> host and port. Errc::kInvalidArgument naming what is wrong.
struct HostPort {
  std::string host;
  std::uint16_t port = 0;
};
Result<HostPort> ParseHostPort(std::string_view text);

// The Error a wire error reply carries; and the reverse.
Error FromWire(wire::Error::Reader error);
void ToWire(const Error& error, wire::Error::Builder out);

// How a client connects: the frame limits and the credential it presents.
struct ClientOptions {
  FrameLimits limits;
  // The API token (docs/SECURITY.md) sent with every request; empty: none (refused by a server
  // that requires credentials). Never logged.
  std::string token;
  // TLS (protocol/tls.h): off unless tls.on(); then the server's certificate is verified
  // against tls.ca_file (or the system's store) and the name dialled (or tls.server_name).
  TlsClientConfig tls;
  // Connecting, including the TLS handshake, fails with Errc::kUnavailable after this long.
  std::chrono::milliseconds connect_timeout{10000};
};

class Client : public std::enable_shared_from_this<Client> {
 public:
  // Connects to `address` ("HOST:PORT"). Errc::kUnavailable naming the address when nothing
  // listens there, when it does not answer in options.connect_timeout, or when the TLS
  // handshake fails (the message says why: an untrusted or misnamed certificate, a plaintext
  // server); Errc::kInvalidArgument for TLS files that cannot be used. (Overloads rather than a default argument: see engine.h on GCC 12.)
  static boost::asio::awaitable<Result<std::shared_ptr<Client>>> Connect(
      boost::asio::any_io_executor executor, std::string address);
  static boost::asio::awaitable<Result<std::shared_ptr<Client>>> Connect(
      boost::asio::any_io_executor executor, std::string address, ClientOptions options);

  Client(std::shared_ptr<FrameStream> stream, std::string address, std::string token);
  ~Client();

  // Sends the Request built in `message` and waits up to `timeout` for its reply.
  boost::asio::awaitable<Result<Reply>> Call(std::unique_ptr<capnp::MallocMessageBuilder> message,
                                             std::chrono::milliseconds timeout);

  void Close();
  bool connected() const { return !stream_->closed(); }
  // Why the server closed the connection, with the server's code, once it said why.
  const std::optional<Error>& close_reason() const { return server_reason_; }
  const std::string& address() const { return address_; }

 private:
  struct Pending {
    boost::asio::any_completion_handler<void(Result<Reply>)> handler;
    std::shared_ptr<boost::asio::steady_timer> timer;
  };
  boost::asio::awaitable<void> ReadLoop();
  void Complete(std::uint64_t id, Result<Reply> result);
  void FailAll(const Error& error);

  std::shared_ptr<FrameStream> stream_;
  std::string address_;
  std::string token_;
  std::uint64_t next_id_ = 1;
  bool replied_ = false;  // a reply has arrived (so the TLS handshake was accepted)
  std::map<std::uint64_t, Pending> pending_;
  std::optional<Error> close_reason_;  // what calls fail with once the server closed, and why
  std::optional<Error> server_reason_;  // the server's reason as it sent it
  std::string certificate_file_;  // --cert, for the message when the server refuses it
  bool reading_ = false;
};

}  // namespace reckon::api
