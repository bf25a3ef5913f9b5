#include "reckon/api/server/server.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <capnp/serialize.h>
#include <kj/exception.h>
#include <spdlog/spdlog.h>

#include "reckon/api/protocol/client.h"
#include "reckon/api/protocol/close_reason.h"
#include "reckon/api/server/connection_deadlines.h"
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
  if (!ip.is_loopback()) {
    spdlog::warn("listening on {}, which is not a loopback address: the protocol has no "
                 "authentication or encryption yet; anyone who can reach it can start "
                 "workflows and approve operations", address);
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
    const auto accepted = Clock::now();
    auto stream = std::make_shared<FrameStream>(std::move(socket), options_.limits, &buffers_);
    if (connections_.size() >= options_.max_connections) {
      Refuse(*stream);
      continue;
    }
    auto connection =
        std::make_shared<Connection>(std::move(stream), executor_, options_, accepted);
    connection->session.id = next_session_++;
    connection->session.peer = connection->stream->peer();
    // Each write that drains replies may release a reader held back by them.
    std::weak_ptr<Connection> weak = connection;
    connection->stream->OnWritten([weak] {
      if (auto c = weak.lock()) c->wake.cancel();
    });
    connections_[connection->session.id] = connection;
    asio::co_spawn(executor_, ReadLoop(connection), asio::detached);
    asio::co_spawn(executor_, Watch(connection), asio::detached);
  }
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

void Server::Refuse(FrameStream& stream) {
  const Error reason = TooManyConnections(options_);
  spdlog::warn("refusing a connection from {} (max-connections): {}", stream.peer(),
               reason.ToString());
  stream.CloseWithLast(EncodeCloseReason(reason));
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
  wire::Request::Reader request;
  std::uint64_t id = 0;
  std::optional<Error> refused;
  try {
    request = reader.getRoot<wire::Request>();
    // Walks every pointer of the message once, within the traversal limit: a malformed
    // message fails here, before any handler sees it.
    (void)request.totalSize();
    id = request.getId();
  } catch (const kj::Exception& e) {
    refused = Err(Errc::kInvalidArgument,
                  "malformed request: " + std::string(e.getDescription().cStr()));
  }
  if (!refused && id == kCloseReasonId) {
    refused = Err(Errc::kInvalidArgument,
                  "request id 0 is reserved for the server's close reason; number requests "
                  "from 1");
  }
  if (refused) {
    CloseFor(*connection, "malformed-request", UnacceptableFrame(*refused));
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
  const bool was_over = stream.queued_bytes() > options_.max_unread_reply_bytes;
  if (!stream.closed()) stream.Send(std::move(reply));
  if (!was_over && stream.queued_bytes() > options_.max_unread_reply_bytes) {
    connection->watch.cancel();  // the watchdog starts the unread-replies clock
  }
  if (--connection->in_flight == 0) connection->deadlines.RequestsDone(Clock::now());
  connection->wake.cancel();
}

}  // namespace reckon::api
