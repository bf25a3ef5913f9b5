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
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <set>

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
  bool framed = false;  // a whole frame has arrived

  // Nothing in flight and nothing left to write: the connection is idle (connection_slots.h).
  void MaybeIdle(ConnectionSlots& slots) const {
    if (framed && in_flight == 0 && stream->queued_bytes() == 0) {
      slots.Enter(session.id, ConnectionSlots::Phase::kIdle, Clock::now());
    }
  }
};

struct Server::Shared {
  explicit Shared(const ServerOptions& options)
      : slots({options.max_connections, options.max_connections_per_peer}) {}
  // A socket between its accept and its Connection (the first byte, the TLS handshake).
  struct Opening {
    asio::ip::tcp::socket* socket;  // where the socket is now; not owned
    std::string peer;
    std::optional<ConnectionSlots::Limit> evicted;  // closed for a newcomer over this limit
  };
  ConnectionSlots slots;
  std::map<SessionId, Opening*> opening;  // the Openings live in Open's frame
};

Server::Server(asio::any_io_executor executor, Service& service, MemoryBudget& buffers,
               ServerOptions options)
    : executor_(executor),
      service_(service),
      buffers_(buffers),
      options_(options),
      accept_(std::make_shared<AcceptLoop>(executor, "wire")),
      shared_(std::make_shared<Shared>(options_)) {}

Server::~Server() { Stop(); }

Result<void> Server::Listen(const std::string& address) {
  const ListenerSecurity security{options_.tls != nullptr, options_.insecure_dev};
  RECKON_TRY(ListenerPermit permit,
             ListenOn(accept_->acceptor(), address, Listener::kProtocol, security));
  (void)permit;
  port_ = accept_->acceptor().local_endpoint().port();
  return Ok();
}

std::size_t Server::connection_count() const { return shared_->slots.size(); }

asio::awaitable<void> Server::Serve() {
  auto open = [this](asio::ip::tcp::socket socket) {
    asio::co_spawn(executor_, Open(std::move(socket), Clock::now()), asio::detached);
  };
  co_await AcceptLoop::Run(accept_, std::move(open));
}

void Server::Evict(const ConnectionSlots::Evicted& evicted, const std::string& newcomer) {
  const char* limit = evicted.limit == ConnectionSlots::Limit::kPerPeer
                          ? "max-connections-per-peer"
                          : "max-connections";
  const Error reason = ConnectionEvicted(options_, evicted.phase, evicted.limit);
  std::shared_ptr<Connection> connection;
  std::string peer;
  if (auto it = shared_->opening.find(evicted.id); it != shared_->opening.end()) {
    peer = it->second->peer;
  } else if (auto found = connections_.find(evicted.id); found != connections_.end()) {
    connection = found->second.lock();
    if (!connection) return;
    peer = connection->stream->peer();
  } else {
    return;
  }
  spdlog::warn("closing connection {} from {} ({}) for a newcomer from {}: {}", evicted.id, peer,
               limit, newcomer, reason.ToString());
  if (connection) {
    Close(*connection, reason);
    return;
  }
  Shared::Opening& opening = *shared_->opening[evicted.id];
  opening.evicted = evicted.limit;
  boost::system::error_code ignored;
  opening.socket->cancel(ignored);  // Open sees `evicted` when its step ends, and says why
}

asio::awaitable<void> Server::Open(asio::ip::tcp::socket socket, Clock::time_point accepted) {
  boost::system::error_code gone;
  const asio::ip::tcp::endpoint from = socket.remote_endpoint(gone);
  if (gone) co_return;  // it left before it was served
  const SessionId id = next_session_++;
  const std::string peer = PeerOf(socket);
  // A socket holds a slot from its accept, handshake included (connection_slots.h).
  ConnectionSlots::Admission admission = shared_->slots.Admit(id, from.address(), accepted);
  for (const ConnectionSlots::Evicted& evicted : admission.evicted) Evict(evicted, peer);
  if (!admission.admitted) {
    const bool per_peer = *admission.refused_by == ConnectionSlots::Limit::kPerPeer;
    const Error reason =
        per_peer ? TooManyConnectionsFromPeer(options_) : TooManyConnections(options_);
    const char* limit = per_peer ? "max-connections-per-peer" : "max-connections";
    if (options_.tls) {
      // A TLS client could not read a plaintext reason: log it and close.
      spdlog::warn("refusing a connection from {} ({}): {}", peer, limit, reason.ToString());
      co_return;
    }
    Refuse(std::make_shared<FrameStream>(std::move(socket), options_.limits, &buffers_), limit,
           reason);
    co_return;
  }
  // Until a Connection takes the slot over: released on every way out. Holds only what it
  // shares with the server: at shutdown this frame may be destroyed after the Server.
  Shared::Opening opening{&socket, peer, std::nullopt};
  struct Opened {
    std::shared_ptr<Shared> shared;
    SessionId id;
    bool handed_over = false;
    ~Opened() {
      shared->opening.erase(id);
      if (!handed_over) shared->slots.Release(id);
    }
  } opened{shared_, id};
  shared_->opening[id] = &opening;
  // One deadline for the first byte and the TLS handshake (the connection's own deadlines
  // then bound the rest of the handshake timeout, up to the first whole frame).
  SocketDeadline deadline(executor_, options_.handshake_timeout);
  deadline.Watch(socket);
  std::array<std::byte, 1> first{};
  auto [pec, peeked] = co_await socket.async_receive(
      asio::buffer(first), asio::socket_base::message_peek, kNoThrow);
  if (pec || peeked == 0 || stopped_ || deadline.expired() || opening.evicted) {
    deadline.Disarm();
    if (deadline.expired() || opening.evicted) {
      // It sent nothing, so it is not in a TLS handshake: it can read a plaintext reason.
      const Error reason = opening.evicted
                               ? ConnectionEvicted(options_, ConnectionSlots::Phase::kOpening,
                                                   *opening.evicted)
                               : HandshakeTimedOut(options_);
      if (!opening.evicted) {
        spdlog::warn("closing connection from {} (handshake-timeout-ms): {}", peer,
                     reason.ToString());
      }
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
    if (auto held = audit_.Admit(std::string(AuditLimiter::HostOf(peer)) + " plaintext",
                                 Clock::now())) {
      spdlog::warn("audit: refused a plaintext connection from {}: this server requires TLS{}",
                   peer, AuditLimiter::Suppressed(*held, peer));
    }
    auto plain = std::make_shared<FrameStream>(std::move(socket), options_.limits, &buffers_);
    plain->CloseWithLast(EncodeCloseReason(Err(
        Errc::kFailedPrecondition,
        "this server requires TLS: connect with --ca FILE (the CA that signed its "
        "certificate) or --tls (the system's CAs)")));
    co_return;
  } else {
    auto tls = std::make_unique<TlsSocket>(std::move(socket), *options_.tls);
    opening.socket = &tls->next_layer();
    deadline.Watch(tls->next_layer());
    if (deadline.expired()) co_return;  // fired between the peek and the handshake
    auto [hec] = co_await tls->async_handshake(asio::ssl::stream_base::server, kNoThrow);
    deadline.Disarm();
    if (opening.evicted) co_return;  // said when it was evicted
    if (deadline.expired()) {
      spdlog::warn("closing connection from {} (handshake-timeout-ms): TLS handshake not done "
                   "in {} ms", peer, options_.handshake_timeout.count());
      co_return;
    }
    if (hec) {
      const std::string why = DescribeTlsError(hec, SSL_get_verify_result(tls->native_handle()));
      if (auto held = audit_.Admit(std::string(AuditLimiter::HostOf(peer)) + " tls " + why,
                                   Clock::now())) {
        spdlog::warn("audit: refused a connection from {}: TLS handshake failed: {}{}", peer, why,
                     AuditLimiter::Suppressed(*held, peer));
      }
      co_return;
    }
    client_certificate = VerifiedPeerCertificate(tls->native_handle());
    if (!client_certificate.empty()) {
      spdlog::debug("connection from {}: client certificate {}", peer, client_certificate);
    }
    bytes = MakeTlsByteStream(std::move(tls));
  }
  if (stopped_) co_return;
  auto stream = std::make_shared<FrameStream>(std::move(bytes), options_.limits, &buffers_);
  auto connection = std::make_shared<Connection>(std::move(stream), executor_, options_, accepted);
  connection->session.id = id;
  connection->session.peer = connection->stream->peer();
  connection->session.client_certificate = std::move(client_certificate);
  // Each write that drains replies may release a reader held back by them, and may leave the
  // connection idle (a newcomer may then take its slot).
  std::weak_ptr<Connection> weak = connection;
  std::weak_ptr<Shared> shared = shared_;
  connection->stream->OnWritten([weak, shared] {
    auto c = weak.lock();
    if (!c) return;
    c->wake.cancel();
    if (auto s = shared.lock()) c->MaybeIdle(s->slots);
  });
  shared_->opening.erase(id);
  connections_[id] = connection;
  opened.handed_over = true;  // ReadLoop releases the slot
  asio::co_spawn(executor_, ReadLoop(connection), asio::detached);
  asio::co_spawn(executor_, Watch(connection), asio::detached);
}

void Server::Stop() {
  if (stopped_) return;
  stopped_ = true;
  accept_->Stop();
  for (auto& [id, weak] : connections_) {
    if (auto connection = weak.lock()) {
      connection->stream->Close();
      connection->wake.cancel();
      connection->watch.cancel();
    }
  }
}

void Server::Withdraw(const Withdrawal& withdrawal) {
  for (auto& [id, weak] : connections_) {
    auto connection = weak.lock();
    if (!connection || connection->stream->closed()) continue;
    const auto& hashes = connection->session.token_hashes;
    if (std::find(hashes.begin(), hashes.end(), withdrawal.token_hash) == hashes.end()) continue;
    service_.Disconnected(connection->session);
    CloseFor(*connection, "credential-withdrawn", withdrawal.reason);
  }
}

std::vector<std::string> Server::OpenCredentials() const {
  std::set<std::string> hashes;
  for (const auto& [id, weak] : connections_) {
    auto connection = weak.lock();
    if (!connection || connection->stream->closed()) continue;
    hashes.insert(connection->session.token_hashes.begin(),
                  connection->session.token_hashes.end());
  }
  return {hashes.begin(), hashes.end()};
}

void Server::CloseFor(Connection& connection, std::string_view limit, const Error& reason) {
  spdlog::warn("closing connection {} from {} ({}): {}", connection.session.id,
               connection.stream->peer(), limit, reason.ToString());
  Close(connection, reason);
}

void Server::Close(Connection& connection, const Error& reason) {
  connection.stream->CloseWithLast(EncodeCloseReason(reason));
  connection.wake.cancel();
  connection.watch.cancel();
}

void Server::Refuse(std::shared_ptr<FrameStream> stream, std::string_view limit,
                    const Error& reason) {
  spdlog::warn("refusing a connection from {} ({}): {}", stream->peer(), limit, reason.ToString());
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
    connection->framed = true;
    shared_->slots.Enter(connection->session.id, ConnectionSlots::Phase::kBusy, Clock::now());
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
  shared_->slots.Release(connection->session.id);
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
  connection->MaybeIdle(shared_->slots);
  connection->wake.cancel();
}

}  // namespace reckon::api
