#include "reckon/api/server/server.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <capnp/serialize.h>
#include <kj/exception.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <spdlog/spdlog.h>

#include <array>

#include "reckon/api/protocol/client.h"
#include "reckon/api/protocol/socket_deadline.h"
#include "reckon/api/protocol/tls.h"

namespace reckon::api {
namespace asio = boost::asio;

namespace {

// A Response with id 0: the server's reason for closing a connection (docs/PROTOCOL.md).
Frame CloseReasonFrame(const Error& reason) {
  capnp::MallocMessageBuilder message(64);
  auto response = message.initRoot<wire::Response>();
  response.setId(0);
  ToWire(reason, response.initResult().initError());
  return EncodeFrame(message);
}

}  // namespace

struct Server::Connection {
  Connection(std::shared_ptr<FrameStream> s, asio::any_io_executor executor)
      : stream(std::move(s)), wake(std::move(executor)) {}
  std::shared_ptr<FrameStream> stream;
  SessionState session;
  std::size_t in_flight = 0;
  asio::steady_timer wake;  // the reader sleeps on it while backpressure holds
};

Server::Server(asio::any_io_executor executor, Service& service, ServerOptions options)
    : executor_(executor), service_(service), options_(options), acceptor_(executor) {}

Server::~Server() { Stop(); }

Result<void> Server::Listen(const std::string& address) {
  RECKON_TRY(HostPort where, ParseHostPort(address));
  boost::system::error_code ec;
  auto ip = asio::ip::make_address(where.host, ec);
  if (ec) {
    return Err(Errc::kInvalidArgument,
               "listen address '" + where.host + "' is not an IP address (use 127.0.0.1)");
  }
  asio::ip::tcp::endpoint endpoint(ip, where.port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Err(Errc::kUnavailable, "cannot listen on " + address + ": " + ec.message() +
                                       " (is another server using the port?)");
  }
  port_ = acceptor_.local_endpoint().port();
  if (!ip.is_loopback() && !options_.tls) {
    spdlog::warn("listening on {} without TLS: tokens and payloads cross the network in "
                 "clear; start the server with --tls-cert and --tls-key", address);
  }
  return Ok();
}

asio::awaitable<void> Server::Serve() {
  while (!stopped_) {
    auto [ec, socket] = co_await acceptor_.async_accept(asio::as_tuple(asio::use_awaitable));
    if (ec) {
      if (stopped_ || ec == asio::error::operation_aborted) break;
      spdlog::warn("accept failed: {}", ec.message());
      continue;
    }
    asio::co_spawn(executor_, Open(std::move(socket)), asio::detached);
  }
}

asio::awaitable<void> Server::Open(asio::ip::tcp::socket socket) {
  const std::string peer = PeerOf(socket);
  // One deadline for the first byte and the TLS handshake.
  SocketDeadline deadline(executor_, options_.handshake_timeout);
  deadline.Watch(socket);
  std::array<std::byte, 1> first{};
  auto [pec, peeked] = co_await socket.async_receive(
      asio::buffer(first), asio::socket_base::message_peek, asio::as_tuple(asio::use_awaitable));
  if (pec || peeked == 0 || stopped_) {
    deadline.Disarm();
    if (deadline.expired()) {
      spdlog::warn("closing connection from {}: nothing received in {} ms (handshake timeout)",
                   peer, options_.handshake_timeout.count());
    }
    co_return;
  }
  const bool hello = first[0] == kTlsHandshakeByte;
  std::unique_ptr<ByteStream> bytes;
  std::string client_certificate;  // its subject, once verified
  if (!options_.tls) {
    deadline.Disarm();
    if (hello) {
      // Its handshake cannot read a reply: log and close; its client reports the closure.
      spdlog::warn("closing connection from {}: it began a TLS handshake, and this server "
                   "listens in plaintext (start it with --tls-cert and --tls-key for TLS)",
                   peer);
      co_return;
    }
    bytes = MakeTcpByteStream(std::move(socket));
  } else if (!hello) {
    deadline.Disarm();
    spdlog::warn("audit: refused a plaintext connection from {}: this server requires TLS",
                 peer);
    Frame reason = CloseReasonFrame(Err(
        Errc::kFailedPrecondition,
        "this server requires TLS: connect with --ca FILE (the CA that signed its "
        "certificate) or --tls (the system's CAs)"));
    auto [wec, written] = co_await asio::async_write(
        socket, asio::buffer(reason.bytes().data(), reason.bytes().size()),
        asio::as_tuple(asio::use_awaitable));
    (void)wec;
    (void)written;
    co_return;
  } else {
    auto tls = std::make_unique<TlsSocket>(std::move(socket), *options_.tls);
    deadline.Watch(tls->next_layer());
    auto [hec] = co_await tls->async_handshake(asio::ssl::stream_base::server,
                                               asio::as_tuple(asio::use_awaitable));
    deadline.Disarm();
    if (deadline.expired()) {
      spdlog::warn("closing connection from {}: TLS handshake not done in {} ms", peer,
                   options_.handshake_timeout.count());
      co_return;
    }
    if (hec) {
      spdlog::warn("audit: refused a connection from {}: TLS handshake failed: {}", peer,
                   DescribeTlsError(hec, SSL_get_verify_result(tls->native_handle())));
      co_return;
    }
    X509* certificate = SSL_get0_peer_certificate(tls->native_handle());
    if (certificate != nullptr && SSL_get_verify_result(tls->native_handle()) == X509_V_OK) {
      char subject[256] = {};
      X509_NAME_oneline(X509_get_subject_name(certificate), subject, sizeof subject);
      client_certificate = subject;
      spdlog::debug("connection from {}: client certificate {}", peer, client_certificate);
    }
    bytes = MakeTlsByteStream(std::move(tls));
  }
  if (stopped_) co_return;
  auto stream = std::make_shared<FrameStream>(std::move(bytes), options_.limits);
  auto connection = std::make_shared<Connection>(std::move(stream), executor_);
  connection->session.id = next_session_++;
  connection->session.peer = connection->stream->peer();
  connection->session.client_certificate = std::move(client_certificate);
  connections_[connection->session.id] = connection;
  co_await ReadLoop(std::move(connection));
}

void Server::Stop() {
  if (stopped_) return;
  stopped_ = true;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  for (auto& [id, weak] : connections_) {
    if (auto connection = weak.lock()) {
      connection->stream->Close();
      connection->wake.cancel();
    }
  }
}

asio::awaitable<void> Server::ReadLoop(std::shared_ptr<Connection> connection) {
  FrameStream& stream = *connection->stream;
  spdlog::debug("connection {} from {}", connection->session.id, stream.peer());
  while (!stream.closed()) {
    // Backpressure: wait while too much is unanswered or unsent.
    while (!stream.closed() && (connection->in_flight >= options_.max_in_flight ||
                                stream.queued_bytes() > options_.max_queued_reply_bytes)) {
      connection->wake.expires_after(std::chrono::milliseconds(5));
      co_await connection->wake.async_wait(asio::as_tuple(asio::use_awaitable));
    }
    if (stream.closed()) break;
    auto frame = co_await stream.Read();
    if (!frame) {
      if (frame.error().code() == Errc::kInvalidArgument) {
        spdlog::warn("closing connection from {}: {}", stream.peer(), frame.error().message());
      } else {
        spdlog::debug("connection from {} ended: {}", stream.peer(), frame.error().message());
      }
      break;
    }
    ++connection->in_flight;
    asio::co_spawn(executor_, Answer(connection, std::move(frame).value()), asio::detached);
  }
  stream.Close();
  service_.Disconnected(connection->session);
  connections_.erase(connection->session.id);
}

asio::awaitable<void> Server::Answer(std::shared_ptr<Connection> connection, Frame frame) {
  FrameStream& stream = *connection->stream;
  capnp::FlatArrayMessageReader reader(frame.words(), options_.limits.ReaderOptions());
  wire::Request::Reader request;
  std::uint64_t id = 0;
  try {
    request = reader.getRoot<wire::Request>();
    // Walks every pointer of the message once, within the traversal limit: a malformed
    // message fails here, before any handler sees it.
    (void)request.totalSize();
    id = request.getId();
  } catch (const kj::Exception& e) {
    spdlog::warn("closing connection from {}: malformed request: {}", stream.peer(),
                 e.getDescription().cStr());
    stream.Close();
    connection->wake.cancel();
    --connection->in_flight;
    co_return;
  }
  std::chrono::milliseconds timeout(request.getTimeoutMs());
  if (timeout.count() == 0) timeout = options_.default_timeout;
  timeout = std::min(timeout, options_.max_timeout);
  // Most replies are small: start with 1 KiB rather than the default 8 KiB (zeroed each time).
  capnp::MallocMessageBuilder message(128);
  auto response = message.initRoot<wire::Response>();
  response.setId(id);
  auto handled = service_.Handle(connection->session, request, timeout, response);
  co_await std::move(handled);
  Frame reply = EncodeFrame(message);
  if (reply.bytes().size() > options_.limits.max_message_bytes) {
    // The peer would refuse it and drop the connection: say why instead.
    capnp::MallocMessageBuilder error_message;
    auto error_response = error_message.initRoot<wire::Response>();
    error_response.setId(id);
    ToWire(Err(Errc::kResourceExhausted,
               "the reply is " + std::to_string(reply.bytes().size()) +
                   " bytes, over the frame limit of " +
                   std::to_string(options_.limits.max_message_bytes) + " bytes"),
           error_response.initResult().initError());
    reply = EncodeFrame(error_message);
  }
  if (!stream.closed()) stream.Send(std::move(reply));
  --connection->in_flight;
  connection->wake.cancel();
}

}  // namespace reckon::api
