// HttpRequest against tiny in-process servers that answer, hang up or stay silent, to pin
// down the failure classification the header promises.
#include "reckon/tools/http/http_client.h"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace reckon::tools {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

enum class Behaviour { kReply, kCloseAfterRequest, kStaySilent };

// Accepts one connection, reads the request head and then behaves as told. `request` gets
// what was read.
asio::awaitable<void> ServeOnce(tcp::acceptor& acceptor, Behaviour behaviour, std::string reply,
                                std::string& request) {
  tcp::socket socket = co_await acceptor.async_accept(asio::use_awaitable);
  asio::streambuf buffer;
  co_await asio::async_read_until(socket, buffer, "\r\n\r\n", asio::use_awaitable);
  request.assign(asio::buffers_begin(buffer.data()), asio::buffers_end(buffer.data()));
  if (behaviour == Behaviour::kReply) {
    co_await asio::async_write(socket, asio::buffer(reply), asio::use_awaitable);
    socket.shutdown(tcp::socket::shutdown_send);
  } else if (behaviour == Behaviour::kCloseAfterRequest) {
    socket.close();
    co_return;
  }
  asio::steady_timer forever(socket.get_executor(), 1h);
  co_await forever.async_wait(asio::use_awaitable);
}

// co_spawn needs a default-constructible result; Result<T> is not, so store it instead.
asio::awaitable<void> Capture(HttpCall call, std::optional<Result<HttpResponse>>& out) {
  out.emplace(co_await HttpRequest(std::move(call)));
}

class HttpClientTest : public ::testing::Test {
 protected:
  // Runs one HttpRequest to completion (servers left pending are abandoned). If
  // `cancel_after` is set, the request is cancelled (terminal) after that long.
  Result<HttpResponse> Run(HttpCall call, std::optional<std::chrono::milliseconds> cancel_after =
                                              std::nullopt) {
    std::optional<Result<HttpResponse>> result;
    asio::cancellation_signal cancel;
    auto on_done = [&](std::exception_ptr error) {
      if (error) std::rethrow_exception(error);
      io_.stop();
    };
    asio::co_spawn(io_, Capture(std::move(call), result),
                   asio::bind_cancellation_slot(cancel.slot(), std::move(on_done)));
    asio::steady_timer timer(io_);
    if (cancel_after) {
      timer.expires_after(*cancel_after);
      auto fire = [&](boost::system::error_code ec) {
        if (!ec) cancel.emit(asio::cancellation_type::terminal);
      };
      timer.async_wait(std::move(fire));
    }
    io_.run();
    if (!result) return Err(Errc::kInternal, "the request never completed");
    return std::move(*result);
  }

  void Serve(Behaviour behaviour, std::string reply = {}) {
    asio::co_spawn(io_, ServeOnce(acceptor_, behaviour, std::move(reply), request_),
                   asio::detached);
  }

  HttpCall Call(std::string method, std::string target) {
    HttpCall call;
    call.method = std::move(method);
    call.port = acceptor_.local_endpoint().port();
    call.target = std::move(target);
    call.deadline = std::chrono::steady_clock::now() + 5s;
    return call;
  }

  asio::io_context io_;
  tcp::acceptor acceptor_{io_, tcp::endpoint(asio::ip::address_v4::loopback(), 0)};
  std::string request_;
};

TEST_F(HttpClientTest, ReturnsAnyStatusWithHeadersAndBody) {
  Serve(Behaviour::kReply,
        "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nX-Thing: a\r\n"
        "Content-Length: 21\r\n\r\n{\"error\":\"not_found\"}");
  HttpCall call = Call("POST", "/refunds?x=1");
  call.headers.push_back({"Idempotency-Key", "op-1"});
  call.body = "{\"a\":1}";
  Result<HttpResponse> response = Run(std::move(call));
  ASSERT_TRUE(response) << response.error().ToString();
  EXPECT_EQ(response.value().status, 404);
  EXPECT_EQ(response.value().Header("x-thing"), "a");
  EXPECT_EQ(response.value().Header("missing"), std::nullopt);
  EXPECT_EQ(ParseJsonBody(response.value()).value().at("error").as_string(), "not_found");
  EXPECT_NE(request_.find("POST /refunds?x=1 HTTP/1.1\r\n"), std::string::npos) << request_;
  EXPECT_NE(request_.find("Idempotency-Key: op-1\r\n"), std::string::npos) << request_;
  EXPECT_NE(request_.find("Content-Length: 7\r\n"), std::string::npos) << request_;
}

// A host name is resolved: "localhost" reaches the loopback listener, and the Host header
// names the host as given.
TEST_F(HttpClientTest, ResolvesAHostName) {
  Serve(Behaviour::kReply, "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n");
  HttpCall call = Call("GET", "/ping");
  call.host = "localhost";
  Result<HttpResponse> response = Run(std::move(call));
  if (!response && response.error().message().find("connection_refused") != std::string::npos) {
    GTEST_SKIP() << "localhost resolves to an address other than 127.0.0.1 first here";
  }
  ASSERT_TRUE(response) << response.error().ToString();
  EXPECT_EQ(response.value().status, 204);
  EXPECT_NE(request_.find("Host: localhost:"), std::string::npos) << request_;
}

TEST_F(HttpClientTest, ConnectionRefusedIsNotSent) {
  HttpCall call = Call("GET", "/");
  acceptor_.close();  // nothing listens on the port any more
  Result<HttpResponse> response = Run(std::move(call));
  ASSERT_FALSE(response);
  EXPECT_EQ(HttpFailureOf(response.error()), HttpFailure::kNotSent);
  EXPECT_EQ(response.error().code(), Errc::kUnavailable);
  EXPECT_NE(response.error().message().find("connection_refused"), std::string::npos)
      << response.error().message();
  // The classification survives added context.
  EXPECT_EQ(HttpFailureOf(response.error().WithContext("send_refund")), HttpFailure::kNotSent);
}

TEST_F(HttpClientTest, DeadlineAlreadyPassedIsNotSent) {
  Serve(Behaviour::kReply, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  HttpCall call = Call("GET", "/");
  call.deadline = std::chrono::steady_clock::now() - 1s;
  Result<HttpResponse> response = Run(std::move(call));
  ASSERT_FALSE(response);
  EXPECT_EQ(HttpFailureOf(response.error()), HttpFailure::kNotSent);
  EXPECT_EQ(response.error().code(), Errc::kDeadlineExceeded) << response.error().message();
}

TEST_F(HttpClientTest, ConnectionClosedAfterSendingIsOutcomeUnknown) {
  Serve(Behaviour::kCloseAfterRequest);
  Result<HttpResponse> response = Run(Call("POST", "/refunds"));
  ASSERT_FALSE(response);
  EXPECT_EQ(HttpFailureOf(response.error()), HttpFailure::kOutcomeUnknown);
  EXPECT_EQ(response.error().code(), Errc::kFailedPrecondition);
  EXPECT_EQ(response.error().action(), ErrorAction::kFixStateFirst);
  EXPECT_NE(response.error().message().find("connection_lost"), std::string::npos)
      << response.error().message();
}

TEST_F(HttpClientTest, DeadlineAfterSendingIsOutcomeUnknown) {
  Serve(Behaviour::kStaySilent);
  HttpCall call = Call("POST", "/refunds");
  call.deadline = std::chrono::steady_clock::now() + 200ms;
  Result<HttpResponse> response = Run(std::move(call));
  ASSERT_FALSE(response);
  EXPECT_EQ(HttpFailureOf(response.error()), HttpFailure::kOutcomeUnknown);
  EXPECT_NE(response.error().message().find("deadline"), std::string::npos)
      << response.error().message();
  EXPECT_FALSE(request_.empty());
}

TEST_F(HttpClientTest, CancellationAfterSendingIsOutcomeUnknown) {
  Serve(Behaviour::kStaySilent);
  Result<HttpResponse> response = Run(Call("POST", "/refunds"), 100ms);
  ASSERT_FALSE(response);
  EXPECT_EQ(HttpFailureOf(response.error()), HttpFailure::kOutcomeUnknown);
  EXPECT_NE(response.error().message().find("cancelled"), std::string::npos)
      << response.error().message();
}

TEST_F(HttpClientTest, MalformedResponseIsOutcomeUnknown) {
  Serve(Behaviour::kReply, "NOT HTTP AT ALL\r\n\r\n");
  Result<HttpResponse> response = Run(Call("GET", "/"));
  ASSERT_FALSE(response);
  EXPECT_EQ(HttpFailureOf(response.error()), HttpFailure::kOutcomeUnknown);
  EXPECT_NE(response.error().message().find("bad_response"), std::string::npos)
      << response.error().message();
}

TEST_F(HttpClientTest, InvalidCallsAreRefusedBeforeConnecting) {
  HttpCall bad_method = Call("FETCH", "/");
  HttpCall bad_host = Call("GET", "/");
  bad_host.host = "";
  HttpCall bad_target = Call("GET", "refunds");
  HttpCall own_length = Call("GET", "/");
  own_length.headers.push_back({"Content-Length", "3"});
  for (const HttpCall& call : {bad_method, bad_host, bad_target, own_length}) {
    Result<HttpResponse> response = Run(call);
    io_.restart();
    ASSERT_FALSE(response);
    EXPECT_EQ(HttpFailureOf(response.error()), HttpFailure::kInvalidCall);
    EXPECT_EQ(response.error().code(), Errc::kInvalidArgument);
  }
  EXPECT_EQ(HttpFailureOf(Err(Errc::kUnavailable, "something else")), std::nullopt);
}

}  // namespace
}  // namespace reckon::tools
