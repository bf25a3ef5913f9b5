#include "tests/support/http_probe.h"

#include <arpa/inet.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace reckon::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using SteadyClock = std::chrono::steady_clock;
constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);

template <class Stream>
asio::awaitable<void> Exchange(Stream& stream, const HttpCall& call, HttpResult& result) {
  http::request<http::string_body> request{call.verb, call.target, 11};
  request.set(http::field::host, "127.0.0.1");
  for (const auto& [name, value] : call.headers) request.set(name, value);
  if (!call.body.empty()) {
    request.set(http::field::content_type, "application/json");
    request.body() = call.body;
  }
  request.keep_alive(false);
  request.prepare_payload();
  auto [wec, written] = co_await http::async_write(stream, request, kNoThrow);
  // A refusal may come while the request is still being written: read the reply regardless.
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  auto [rec, read] = co_await http::async_read(stream, buffer, response, kNoThrow);
  if (rec) {
    result.error = "no reply: " + rec.message() + (wec ? " (write: " + wec.message() + ")" : "");
    co_return;
  }
  result.status = response.result_int();
  result.body = response.body();
}

asio::awaitable<void> Call(asio::io_context& io, std::uint16_t port, const HttpCall& call,
                           HttpResult& result) {
  asio::ip::tcp::socket socket(io);
  boost::system::error_code ec;
  socket.open(asio::ip::tcp::v4(), ec);
  if (!ec) socket.bind({asio::ip::make_address(call.source), 0}, ec);
  if (ec) {
    result.error = "cannot bind " + call.source + ": " + ec.message();
    co_return;
  }
  auto [cec] = co_await socket.async_connect({asio::ip::make_address("127.0.0.1"), port}, kNoThrow);
  if (cec) {
    result.error = "cannot connect: " + cec.message();
    co_return;
  }
  if (!call.tls) {
    beast::tcp_stream stream(std::move(socket));
    co_await Exchange(stream, call, result);
    co_return;
  }
  asio::ssl::context context(asio::ssl::context::tls_client);
  context.load_verify_file(call.tls->ca, ec);
  if (!ec && !call.tls->cert.empty()) {
    context.use_certificate_chain_file(call.tls->cert, ec);
    if (!ec) context.use_private_key_file(call.tls->key, asio::ssl::context::pem, ec);
  }
  if (ec) {
    result.error = "cannot load the test certificates: " + ec.message();
    co_return;
  }
  context.set_verify_mode(asio::ssl::verify_peer);
  beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(socket)), context);
  auto [hec] = co_await stream.async_handshake(asio::ssl::stream_base::client, kNoThrow);
  if (hec) {
    result.error = "TLS handshake failed: " + hec.message();
    co_return;
  }
  co_await Exchange(stream, call, result);
}

}  // namespace

HttpResult HttpOnce(std::uint16_t port, const HttpCall& call) {
  asio::io_context io;
  HttpResult result;
  bool done = false;
  const auto started = SteadyClock::now();
  auto run = [&]() -> asio::awaitable<void> {
    co_await Call(io, port, call, result);
    done = true;
  };
  asio::co_spawn(io, run(), asio::detached);
  io.run_for(call.timeout);
  result.ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - started).count();
  if (!done) {
    result = HttpResult{};
    result.error = "no reply within " + std::to_string(call.timeout.count()) + " ms";
    result.ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - started).count();
  }
  return result;
}

RawSocket::RawSocket(const std::string& source, std::uint16_t port) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd_ < 0) return;
  sockaddr_in from{};
  from.sin_family = AF_INET;
  ::inet_pton(AF_INET, source.c_str(), &from.sin_addr);
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0) return;
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0;
}

RawSocket::~RawSocket() { Close(); }

RawSocket::RawSocket(RawSocket&& other) noexcept
    : fd_(other.fd_), connected_(other.connected_), ended_(other.ended_) {
  other.fd_ = -1;
}

RawSocket& RawSocket::operator=(RawSocket&& other) noexcept {
  if (this != &other) {
    Close();
    fd_ = other.fd_;
    connected_ = other.connected_;
    ended_ = other.ended_;
    other.fd_ = -1;
  }
  return *this;
}

void RawSocket::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool RawSocket::Send(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool RawSocket::Ended() {
  if (ended_ || fd_ < 0) return true;
  pollfd p{fd_, POLLIN, 0};
  while (::poll(&p, 1, 0) == 1) {
    char buffer[4096];
    const ssize_t n = ::recv(fd_, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) return ended_ = true;
    if (n < 0) return false;
  }
  return false;
}

bool RawSocket::WaitEnded(std::chrono::milliseconds timeout) {
  const auto deadline = SteadyClock::now() + timeout;
  while (!Ended()) {
    if (SteadyClock::now() >= deadline) return false;
    pollfd p{fd_, POLLIN, 0};
    ::poll(&p, 1, 20);
  }
  return true;
}

std::string_view PartialClientHello() {
  // A handshake record (0x16), TLS 1.0 record version, 512 bytes announced; then the start of
  // a ClientHello (type 1, 508 bytes announced, version 3.3) and nothing more.
  static constexpr std::string_view kHello("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11);
  return kHello;
}

}  // namespace reckon::testing
