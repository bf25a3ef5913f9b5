#include "reckon/telemetry/metrics_listener.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include <charconv>
#include <chrono>
#include <set>

namespace reckon {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;

namespace {
constexpr std::size_t kMaxRequestBytes = 8 * 1024;
constexpr std::size_t kMaxConnections = 16;
constexpr std::chrono::seconds kTimeout{10};
}  // namespace

struct MetricsListener::Shared {
  explicit Shared(asio::any_io_executor executor, const MetricsRegistry& r)
      : accept(std::make_shared<AcceptLoop>(executor, "metrics")), registry(&r) {}
  std::shared_ptr<AcceptLoop> accept;  // owns the acceptor
  const MetricsRegistry* registry;  // null once stopped
  std::set<beast::tcp_stream*> live;  // open connections, for Stop
};

MetricsListener::MetricsListener(asio::any_io_executor executor, const MetricsRegistry& registry)
    : executor_(executor), shared_(std::make_shared<Shared>(executor, registry)) {}

MetricsListener::~MetricsListener() { Stop(); }

Result<void> MetricsListener::Listen(const std::string& address) {
  const std::size_t colon = address.rfind(':');
  std::uint16_t port = 0;
  const char* port_end = address.data() + address.size();
  if (colon == std::string::npos || colon + 1 == address.size() ||
      std::from_chars(address.data() + colon + 1, port_end, port).ptr != port_end) {
    return Err(Errc::kInvalidArgument,
               "metrics address '" + address + "' is not HOST:PORT (e.g. 127.0.0.1:9464)");
  }
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  boost::system::error_code ec;
  const auto ip = asio::ip::make_address(host, ec);
  if (ec) {
    return Err(Errc::kInvalidArgument,
               "metrics address '" + address + "': '" + host + "' is not an IP address");
  }
  const tcp::endpoint endpoint(ip, port);
  tcp::acceptor& acceptor = shared_->accept->acceptor();
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Err(Errc::kUnavailable, "cannot serve metrics on " + address + ": " + ec.message() +
                                       " (is the port taken?)");
  }
  port_ = acceptor.local_endpoint().port();
  asio::co_spawn(executor_, Accept(shared_), asio::detached);
  return Ok();
}

void MetricsListener::Stop() {
  shared_->registry = nullptr;
  shared_->accept->Stop();
  boost::system::error_code ignored;
  for (beast::tcp_stream* stream : shared_->live) stream->socket().close(ignored);
}

AcceptCounts MetricsListener::accept_counts() const { return shared_->accept->counts(); }

asio::awaitable<void> MetricsListener::Accept(std::shared_ptr<Shared> shared) {
  // Called only while Run runs, inside this frame, which holds `shared`.
  auto serve = [&shared](tcp::socket socket) {
    if (shared->registry == nullptr) return;
    if (shared->live.size() >= kMaxConnections) return;  // dropped: the socket closes
    asio::co_spawn(shared->accept->acceptor().get_executor(), Serve(shared, std::move(socket)),
                   asio::detached);
  };
  co_await AcceptLoop::Run(shared->accept, std::move(serve));
}

asio::awaitable<void> MetricsListener::Serve(std::shared_ptr<Shared> shared, tcp::socket socket) {
  beast::tcp_stream stream(std::move(socket));
  shared->live.insert(&stream);
  struct Unlist {
    Shared& shared;
    beast::tcp_stream* stream;
    ~Unlist() { shared.live.erase(stream); }
  } unlist{*shared, &stream};
  stream.expires_after(kTimeout);
  beast::flat_buffer buffer(kMaxRequestBytes);
  http::request_parser<http::empty_body> parser;
  parser.header_limit(kMaxRequestBytes);
  parser.body_limit(0);
  boost::system::error_code ec;
  co_await http::async_read(stream, buffer, parser, asio::redirect_error(asio::use_awaitable, ec));
  if (ec || shared->registry == nullptr) co_return;
  const auto& request = parser.get();
  http::response<http::string_body> response;
  response.version(11);
  response.keep_alive(false);
  const std::string_view target(request.target().data(), request.target().size());
  const std::string_view path = target.substr(0, target.find('?'));
  if (request.method() == http::verb::get && path == "/metrics") {
    response.result(http::status::ok);
    response.set(http::field::content_type, std::string(MetricsRegistry::kContentType));
    response.body() = shared->registry->WriteText();
  } else {
    response.result(http::status::not_found);
    response.set(http::field::content_type, "text/plain; charset=utf-8");
    response.body() = "only GET /metrics is served here\n";
  }
  response.set(http::field::cache_control, "no-store");
  response.prepare_payload();
  co_await http::async_write(stream, response, asio::redirect_error(asio::use_awaitable, ec));
  stream.socket().shutdown(tcp::socket::shutdown_send, ec);
}

}  // namespace reckon
