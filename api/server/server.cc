#include "reckon/api/server/server.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <capnp/serialize.h>
#include <kj/exception.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <spdlog/spdlog.h>

#include <array>

#include "reckon/protocol/client.h"
#include "reckon/protocol/close_reason.h"
#include "reckon/protocol/socket_deadline.h"
#include "reckon/protocol/tls.h"
#include "reckon/api/server/connection_deadlines.h"
#include "reckon/api/server/listen.h"
#include "reckon/api/server/request_decode.h"
#include "reckon/api/server/server_limits.h"

namespace reckon::api {
namespace asio = boost::asio;
using Clock = ConnectionDeadlines::Clock;

namespace {

constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);
// A reader held back only by the budget (which has no wake-up of its own) looks again this often.
constexpr std::chrono::milliseconds kBudgetRecheck{20};
// After a failed accept (out of file descriptors, say), wait this long before the next.
constexpr std::chrono::milliseconds kAcceptBackoff{100};

}  // namespace

struct Server::Connection {
  Connection(std::shared_ptr<FrameStream> s, asio::any_io_executor executor,
             const ServerOptions& options, Clock::time_point accepted)
      : stream(std::move(s)), wake(executor), watch(executor), deadlines(options, accepted) {}
  std::shared_ptr<FrameStream> stream;
  SessionState session;
  std::size_t in_flight = 0;
  asio::steady_timer wake;   // the reader sleeps on it while backpressure holds
  asio::steady_timer watch;  // the watchdog sleeps on it until the next deadline
  ConnectionDeadlines deadlines;
};

Server::Server(asio::any_io_executor executor, Service& service, MemoryBudget& buffers,
               ServerOptions options)
    : executor_(executor),
      service_(service),
      buffers_(buffers),
      options_(options),
      acceptor_(executor) {}

Server::~Server() { Stop(); }

Result<void> Server::Listen(const std::string& address) {
  RECKON_TRY(asio::ip::address ip, ListenOn(acceptor_, address, "listen"));
  port_ = acceptor_.local_endpoint().port();
  if (!ip.is_loopback() && !options_.tls) {
    spdlog::warn("listening on {} without TLS: tokens and payloads cross the network in "
                 "clear; start the server with --tls-cert and --tls-key", address);
  }
  return Ok();
}

asio::awaitable<void> Server::Serve() {
  while (!stopped_) {
    auto [ec, socket] = co_await acceptor_.async_accept(kNoThrow);
    if (ec) {
      if (stopped_ || ec == asio::error::operation_aborted) break;
      spdlog::warn("accept failed: {}", ec.message());
      asio::steady_timer backoff(executor_, kAcceptBackoff);
      co_await backoff.async_wait(kNoThrow);
      continue;
    }
    asio::co_spawn(executor_, Open(std::move(socket), Clock::now()), asio::detached);
  }
}

asio::awaitable<void> Server::Open(asio::ip::tcp::socket socket, Clock::time_point accepted) {
  // A socket counts against max_connections from its accept, handshake included.
  if (connection_count() >= options_.max_connections) {
    if (options_.tls) {
      // A TLS client could not read a plaintext reason: log it and close.
      spdlog::warn("refusing a connection from {} (max-connections): {}", PeerOf(socket),
                   TooManyConnections(options_).ToString());
      co_return;
    }
    Refuse(std::make_shared<FrameStream>(std::move(socket), options_.limits, &buffers_));
    co_return;
  }
  // Shared with this coroutine: at shutdown its frame may be destroyed after the Server.
  struct Opened {
    std::shared_ptr<std::size_t> opening;
    ~Opened() { --*opening; }
  } opened{opening_};
  ++*opening_;
  const std::string peer = PeerOf(socket);
  // One deadline for the first byte and the TLS handshake (the connection's own deadlines
  // then bound the rest of the handshake timeout, up to the first whole frame).
  SocketDeadline deadline(executor_, options_.handshake_timeout);
  deadline.Watch(socket);
  std::array<std::byte, 1> first{};
  auto [pec, peeked] = co_await socket.async_receive(
      asio::buffer(first), asio::socket_base::message_peek, kNoThrow);
  if (pec || peeked == 0 || stopped_ || deadline.expired()) {
    deadline.Disarm();
    if (deadline.expired()) {
      // It sent nothing, so it is not in a TLS handshake: it can read a plaintext reason.
      const Error reason = HandshakeTimedOut(options_);
      spdlog::warn("closing connection from {} (handshake-timeout-ms): {}", peer,
                   reason.ToString());
      auto plain = std::make_shared<FrameStream>(std::move(socket), options_.limits, &buffers_);
      plain->CloseWithLast(EncodeCloseReason(reason));
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
    auto plain = std::make_shared<FrameStream>(std::move(socket), options_.limits, &buffers_);
    plain->CloseWithLast(EncodeCloseReason(Err(
        Errc::kFailedPrecondition,
        "this server requires TLS: connect with --ca FILE (the CA that signed its "
        "certificate) or --tls (the system's CAs)")));
    co_return;
  } else {
    auto tls = std::make_unique<TlsSocket>(std::move(socket), *options_.tls);
    deadline.Watch(tls->next_layer());
    if (deadline.expired()) co_return;  // fired between the peek and the handshake
    auto [hec] = co_await tls->async_handshake(asio::ssl::stream_base::server, kNoThrow);
    deadline.Disarm();
    if (deadline.expired()) {
      spdlog::warn("closing connection from {} (handshake-timeout-ms): TLS handshake not done "
                   "in {} ms", peer, options_.handshake_timeout.count());
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
  auto stream = std::make_shared<FrameStream>(std::move(bytes), options_.limits, &buffers_);
  auto connection = std::make_shared<Connection>(std::move(stream), executor_, options_, accepted);
  connection->session.id = next_session_++;
  connection->session.peer = connection->stream->peer();
  connection->session.client_certificate = std::move(client_certificate);
  // Each write that drains replies may release a reader held back by them.
  std::weak_ptr<Connection> weak = connection;
  connection->stream->OnWritten([weak] {
    if (auto c = weak.lock()) c->wake.cancel();
  });
  connections_[connection->session.id] = connection;
  asio::co_spawn(executor_, ReadLoop(connection), asio::detached);
  asio::co_spawn(executor_, Watch(connection), asio::detached);
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
      connection->watch.cancel();
    }
  }
}

void Server::CloseFor(Connection& connection, std::string_view limit, const Error& reason) {
  spdlog::warn("closing connection {} from {} ({}): {}", connection.session.id,
               connection.stream->peer(), limit, reason.ToString());
  connection.stream->CloseWithLast(EncodeCloseReason(reason));
  connection.wake.cancel();
  connection.watch.cancel();
}

void Server::Refuse(std::shared_ptr<FrameStream> stream) {
  const Error reason = TooManyConnections(options_);
  spdlog::warn("refusing a connection from {} (max-connections): {}", stream->peer(),
               reason.ToString());
  stream->CloseWithLast(EncodeCloseReason(reason));
}

bool Server::MustWait(const Connection& connection) const {
  const FrameStream& stream = *connection.stream;
  if (connection.in_flight >= options_.max_in_flight) return true;
  if (stream.queued_bytes() > options_.max_unread_reply_bytes) return true;
  // Over the budget, a connection that holds requests or replies waits for them to go; one that
  // holds nothing may read (and is closed if its buffer cannot grow).
  return buffers_.exhausted() && (connection.in_flight > 0 || stream.queued_bytes() > 0);
}

asio::awaitable<void> Server::ReadLoop(std::shared_ptr<Connection> connection) {
  FrameStream& stream = *connection->stream;
  spdlog::debug("connection {} from {}", connection->session.id, stream.peer());
  while (!stream.closed()) {
    // Backpressure: wait while too much is unanswered or unsent. Answers and writes wake the
    // reader; only the budget needs a second look on a timer.
    while (!stream.closed() && MustWait(*connection)) {
      connection->wake.expires_after(kBudgetRecheck);
      co_await connection->wake.async_wait(kNoThrow);
    }
    if (stream.closed()) break;
    auto frame = co_await stream.Read();
    if (frame && stream.closed()) break;  // closed while the frame came in: not answered
    if (!frame) {
      const Error& error = frame.error();
      if (stream.closed()) {
        // closed by the watchdog or Stop(), which said why
      } else if (error.code() == Errc::kInvalidArgument) {
        CloseFor(*connection, "frame-limits", UnacceptableFrame(error));
      } else if (error.code() == Errc::kResourceExhausted) {
        CloseFor(*connection, "max-buffered-mib", BuffersFull(options_, error));
      } else {
        spdlog::debug("connection from {} ended: {}", stream.peer(), error.message());
      }
      break;
    }
    if (connection->deadlines.FrameReceived(Clock::now())) connection->watch.cancel();
    ++connection->in_flight;
    // The request's memory counts against the budget until it is answered.
    MemoryCharge charge(&buffers_, frame.value().bytes().size());
    asio::co_spawn(executor_, Answer(connection, std::move(frame).value(), std::move(charge)),
                   asio::detached);
    // co_spawn starts the answer at once (it dispatches): a handler that does not wait has
    // queued its reply before the next request is read, so backpressure counts it.
  }
  stream.Close();
  connection->watch.cancel();
  service_.Disconnected(connection->session);
  connections_.erase(connection->session.id);
}

asio::awaitable<void> Server::Watch(std::shared_ptr<Connection> connection) {
  while (!connection->stream->closed()) {
    const FrameStream& stream = *connection->stream;
    auto verdict = connection->deadlines.Check(
        Clock::now(), {connection->in_flight, stream.queued_bytes(), stream.bytes_sent()});
    if (verdict.broken) {
      CloseFor(*connection, verdict.limit, *verdict.broken);
      break;
    }
    connection->watch.expires_at(verdict.check_again);
    co_await connection->watch.async_wait(kNoThrow);
  }
}

asio::awaitable<void> Server::Answer(std::shared_ptr<Connection> connection, Frame frame,
                                     [[maybe_unused]] MemoryCharge charge) {
  FrameStream& stream = *connection->stream;
  capnp::FlatArrayMessageReader reader(frame.words(), options_.limits.ReaderOptions());
  auto decoded = DecodeRequest(reader);
  if (!decoded) {
    CloseFor(*connection, "malformed-request", UnacceptableFrame(decoded.error()));
    --connection->in_flight;
    co_return;
  }
  const wire::Request::Reader request = decoded.value();
  const std::uint64_t id = request.getId();
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
  const bool was_over = stream.queued_bytes() > options_.max_unread_reply_bytes;
  if (!stream.closed()) stream.Send(std::move(reply));
  if (!was_over && stream.queued_bytes() > options_.max_unread_reply_bytes) {
    connection->watch.cancel();  // the watchdog starts the unread-replies clock
  }
  if (--connection->in_flight == 0) connection->deadlines.RequestsDone(Clock::now());
  connection->wake.cancel();
}

}  // namespace reckon::api
