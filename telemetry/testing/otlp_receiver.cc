#include "reckon/telemetry/testing/otlp_receiver.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <thread>

namespace reckon::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::awaitable;
using asio::ip::tcp;

class OtlpReceiver::Server {
 public:
  Server(OtlpReceiver& owner, Mode mode) : owner_(owner), mode_(mode) {
    acceptor_.open(tcp::v4());
    acceptor_.set_option(tcp::acceptor::reuse_address(true));
    acceptor_.bind(tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    acceptor_.listen();
    port_ = acceptor_.local_endpoint().port();
    asio::co_spawn(io_, Accept(), asio::detached);
    thread_ = std::thread([this] { io_.run(); });
  }
  ~Server() {
    io_.stop();
    thread_.join();
  }
  std::uint16_t port() const { return port_; }

 private:
  awaitable<void> Accept() {
    for (;;) {
      auto [ec, socket] = co_await acceptor_.async_accept(asio::as_tuple(asio::use_awaitable));
      if (ec) co_return;
      {
        std::lock_guard lock(owner_.mutex_);
        ++owner_.connections_;
      }
      asio::co_spawn(io_, Serve(beast::tcp_stream(std::move(socket))), asio::detached);
    }
  }

  awaitable<void> Serve(beast::tcp_stream stream) {
    beast::flat_buffer buffer;
    for (;;) {
      http::request<http::string_body> request;
      auto [ec, n] =
          co_await http::async_read(stream, buffer, request, asio::as_tuple(asio::use_awaitable));
      if (ec) co_return;
      owner_.Record(OtlpRequest{std::string(request.method_string()),
                                std::string(request.target()),
                                std::string(request[http::field::content_type]),
                                std::move(request.body()), 0});
      if (mode_ == Mode::kHang) {
        held_.push_back(std::move(stream));  // open, silent, until the receiver goes
        co_return;
      }
      const bool accept = mode_ != Mode::kFail500;
      http::response<http::string_body> response{
          accept ? http::status::ok : http::status::internal_server_error, 11};
      response.set(http::field::content_type, "application/json");
      response.body() = accept ? "{}" : "{\"message\":\"test failure\"}";
      response.keep_alive(request.keep_alive());
      response.prepare_payload();
      auto [write_error, written] =
          co_await http::async_write(stream, response, asio::as_tuple(asio::use_awaitable));
      if (write_error || !request.keep_alive() || mode_ == Mode::kAcceptThenClose) co_return;
    }
  }

  OtlpReceiver& owner_;
  const Mode mode_;
  asio::io_context io_{1};
  tcp::acceptor acceptor_{io_};
  std::vector<beast::tcp_stream> held_;
  std::uint16_t port_ = 0;
  std::thread thread_;
};

OtlpReceiver::OtlpReceiver(Mode mode, bool keep_bodies)
    : keep_bodies_(keep_bodies), server_(std::make_unique<Server>(*this, mode)) {}
OtlpReceiver::~OtlpReceiver() { server_.reset(); }

std::string OtlpReceiver::endpoint() const {
  return "http://127.0.0.1:" + std::to_string(server_->port());
}

std::vector<OtlpRequest> OtlpReceiver::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

int OtlpReceiver::connections() const {
  std::lock_guard lock(mutex_);
  return connections_;
}

bool OtlpReceiver::WaitFor(const std::function<bool(const std::vector<OtlpRequest>&)>& done,
                           std::chrono::milliseconds limit) const {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, limit, [&] { return done(requests_); });
}

void OtlpReceiver::Record(OtlpRequest request) {
  request.body_bytes = request.body.size();
  if (!keep_bodies_) std::string().swap(request.body);
  {
    std::lock_guard lock(mutex_);
    requests_.push_back(std::move(request));
  }
  changed_.notify_all();
}

}  // namespace reckon::testing
