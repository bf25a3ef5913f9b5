#include "samples/payments_provider/server.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/json/value.hpp>

#include <array>
#include <chrono>
#include <exception>
#include <string>

namespace reckon::samples::provider {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

constexpr auto kIdleTimeout = 30s;
constexpr auto kWriteTimeout = 10s;
constexpr auto kDrainTimeout = 2s;
constexpr std::size_t kMaxDrainBytes = 16 * 1024 * 1024;

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

// Reads and discards what the client is still sending, so that closing the socket does not
// reset the connection before the client has read our reply.
asio::awaitable<void> DrainAndClose(beast::tcp_stream& stream) {
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  stream.expires_after(kDrainTimeout);
  std::array<char, 16 * 1024> sink;
  std::size_t drained = 0;
  while (drained < kMaxDrainBytes) {
    auto [ec, n] = co_await stream.async_read_some(asio::buffer(sink), kTuple);
    if (ec) break;
    drained += n;
  }
  stream.socket().close(ignored);
}

// The process boundary for a coroutine: a bug (exception) is logged, not propagated.
void LogFailure(spdlog::logger& log, std::string_view what, std::exception_ptr error) {
  if (!error) return;
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    log.error("{} failed: {}", what, e.what());
  } catch (...) {
    log.error("{} failed with a non-standard exception", what);
  }
}

// Sends an error reply to a request that could not be read whole, then closes. `request`
// names it for the log ("POST /refunds", or "unparsed request").
asio::awaitable<void> Refuse(beast::tcp_stream& stream, std::string_view request, int status,
                             std::string_view code, std::string_view message,
                             spdlog::logger& log) {
  log.info("{} -> {} ({})", request, status, message);
  HttpResponseMessage response =
      JsonResponse(status, ErrorReply(status, code, message).body, 11);
  response.keep_alive(false);
  stream.expires_after(kWriteTimeout);
  auto [ec, n] = co_await http::async_write(stream, response, kTuple);
  (void)ec;
  (void)n;
  co_await DrainAndClose(stream);
}

bool IsHttpParseError(const beast::error_code& ec) {
  return ec.category() == beast::http::make_error_code(http::error::bad_version).category();
}

asio::awaitable<void> Connection(tcp::socket socket, Router& router, spdlog::logger& log) {
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(kMaxBodyBytes);
    stream.expires_after(kIdleTimeout);
    auto [read_ec, read] = co_await http::async_read(stream, buffer, parser, kTuple);
    (void)read;
    // Arguments are built before each co_await: GCC 12 mishandles some temporaries in it.
    if (read_ec == http::error::body_limit) {
      const auto& head = parser.get();
      std::string request = std::string(head.method_string()) + " " + std::string(head.target());
      std::string message =
          "the body is larger than " + std::to_string(kMaxBodyBytes) + " bytes";
      co_await Refuse(stream, request, 413, "payload_too_large", message, log);
      co_return;
    }
    if (read_ec == http::error::end_of_stream) break;
    if (read_ec && IsHttpParseError(read_ec) && read_ec != http::error::partial_message) {
      std::string message = "malformed HTTP: " + read_ec.message();
      co_await Refuse(stream, "unparsed request", 400, "bad_request", message, log);
      co_return;
    }
    if (read_ec) co_return;  // timeout, reset, ...: nothing to answer

    HttpRequestMessage request = parser.release();
    const bool keep_alive = request.keep_alive();
    std::string method(request.method_string());
    std::string target(request.target());
    auto key_header = request.find("Idempotency-Key");
    std::string key = key_header == request.end() ? "-" : std::string(key_header->value());

    asio::awaitable<RoutedReply> handle = router.Handle(std::move(request));
    RoutedReply reply = co_await std::move(handle);
    if (reply.drop_connection) {
      log.info("{} {} -> dropped (committed {}, reply not sent) key={}", method, target,
               reply.response.result_int(), key);
      beast::error_code ignored;
      stream.socket().close(ignored);
      co_return;
    }
    log.info("{} {} -> {} key={}", method, target, reply.response.result_int(), key);
    reply.response.keep_alive(keep_alive);
    stream.expires_after(kWriteTimeout);
    auto [write_ec, written] = co_await http::async_write(stream, reply.response, kTuple);
    (void)written;
    if (write_ec) co_return;
    if (!keep_alive) break;
  }
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

}  // namespace

asio::awaitable<void> Serve(tcp::acceptor& acceptor, Router& router, spdlog::logger& log) {
  for (;;) {
    auto [ec, socket] = co_await acceptor.async_accept(kTuple);
    if (!acceptor.is_open() || ec == asio::error::operation_aborted) co_return;
    if (ec) {
      log.warn("accept failed: {}", ec.message());
      asio::steady_timer pause(co_await asio::this_coro::executor, 50ms);
      co_await pause.async_wait(kTuple);
      continue;
    }
    // A bug in one connection is logged; the server goes on.
    auto on_done = [&log](std::exception_ptr error) { LogFailure(log, "connection", error); };
    asio::co_spawn(acceptor.get_executor(), Connection(std::move(socket), router, log),
                   std::move(on_done));
  }
}

void StartServing(asio::io_context& io, tcp::acceptor& acceptor, Router& router,
                  spdlog::logger& log) {
  auto on_done = [&log, &io](std::exception_ptr error) {
    if (!error) return;
    LogFailure(log, "server", error);
    io.stop();
  };
  asio::co_spawn(io, Serve(acceptor, router, log), std::move(on_done));
}

}  // namespace reckon::samples::provider
