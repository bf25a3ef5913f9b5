#include "samples/agent/fake_chat_server.h"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <deque>
#include <exception>
#include <iostream>
#include <mutex>
#include <thread>
#include <utility>

namespace reckon::agent {
namespace fake_chat_internal {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

constexpr std::string_view kPath = "/v1/chat/completions";
constexpr std::size_t kMaxBodyBytes = 8 * 1024 * 1024;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

struct Answer {
  int status = 200;
  std::string body;
  bool hang = false;
};

std::string ErrorBody(std::string_view message, std::string_view type) {
  json::object error{{"message", message}, {"type", type}, {"code", nullptr}};
  return json::serialize(json::object{{"error", std::move(error)}});
}

// What every part of the server shares; outlives the io_context (see FakeChatServer::Impl).
struct Shared {
  FakeChatServer::Options options;
  mutable std::mutex mutex;
  std::deque<Answer> queued;            // guarded by mutex
  std::size_t next_content = 0;         // guarded by mutex
  std::uint64_t count = 0;              // guarded by mutex
  std::optional<FakeChatRequest> last;  // guarded by mutex
  std::uint16_t port = 0;               // guarded by mutex

  struct Decision {
    Answer answer;
    std::uint64_t count = 0;  // counted requests so far, this one included
  };

  // Records a counted request and decides its answer.
  Decision Decide(FakeChatRequest request) {
    json::value parsed = [&] {
      boost::system::error_code ec;
      json::value value = json::parse(request.body, ec);
      return ec ? json::value() : value;
    }();
    std::lock_guard lock(mutex);
    last = std::move(request);
    const std::uint64_t counted = ++count;
    if (!queued.empty()) {
      Answer answer = std::move(queued.front());
      queued.pop_front();
      return {std::move(answer), counted};
    }
    const json::object* body = parsed.if_object();
    const json::value* model = body ? body->if_contains("model") : nullptr;
    const json::value* messages = body ? body->if_contains("messages") : nullptr;
    if (model == nullptr || !model->is_string() || messages == nullptr || !messages->is_array()) {
      return {{400, ErrorBody("the body must be a JSON object with a string \"model\" and an "
                              "array \"messages\"",
                              "invalid_request_error")},
              counted};
    }
    if (options.contents.empty()) {
      return {{500, ErrorBody("the fake chat server has no scripted reply", "server_error")},
              counted};
    }
    std::size_t index = next_content;
    if (options.reply_by == FakeChatServer::ReplyBy::kTurn) {
      index = static_cast<std::size_t>(std::count_if(
          messages->as_array().begin(), messages->as_array().end(), [](const json::value& m) {
            const json::object* message = m.if_object();
            const json::value* role = message ? message->if_contains("role") : nullptr;
            return role != nullptr && role->is_string() && role->as_string() == "assistant";
          }));
      index = std::min(index, options.contents.size() - 1);
    } else if (next_content + 1 < options.contents.size()) {
      ++next_content;
    }
    const std::string& content = options.contents[index];
    return {{200, FakeChatServer::CompletionBody(content, model->as_string())}, counted};
  }
};

http::response<http::string_body> Response(int status, std::string body, unsigned version) {
  http::response<http::string_body> response(static_cast<http::status>(status), version);
  response.set(http::field::content_type, "application/json");
  response.body() = std::move(body);
  response.prepare_payload();
  return response;
}

asio::awaitable<void> Connection(tcp::socket socket, Shared& shared) {
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(kMaxBodyBytes);
    stream.expires_after(30s);
    auto [read_ec, read] = co_await http::async_read(stream, buffer, parser, kTuple);
    (void)read;
    if (read_ec) co_return;  // closed, timed out or malformed: nothing to answer
    http::request<http::string_body> request = parser.release();
    const bool keep_alive = request.keep_alive();

    Answer answer;
    if (request.target() != kPath) {
      answer = {404, ErrorBody("no route", "invalid_request_error")};
    } else if (request.method() != http::verb::post) {
      answer = {405, ErrorBody("use POST", "invalid_request_error")};
    } else {
      FakeChatRequest recorded;
      recorded.body = request.body();
      auto authorization = request.find(http::field::authorization);
      if (authorization != request.end()) recorded.authorization = authorization->value();
      Shared::Decision decision = shared.Decide(std::move(recorded));
      answer = std::move(decision.answer);
      if (shared.options.on_request) shared.options.on_request(decision.count);
    }
    if (answer.hang) {
      asio::steady_timer forever(stream.get_executor(),
                                 std::chrono::steady_clock::time_point::max());
      auto [ignored] = co_await forever.async_wait(kTuple);
      (void)ignored;
      co_return;
    }
    auto response = Response(answer.status, std::move(answer.body), request.version());
    response.keep_alive(keep_alive);
    stream.expires_after(10s);
    auto [write_ec, written] = co_await http::async_write(stream, response, kTuple);
    (void)written;
    if (write_ec || !keep_alive) break;
  }
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

void ReportBug(std::string_view what, std::exception_ptr error) {
  if (!error) return;
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    std::cerr << "fake chat server: " << what << " failed: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "fake chat server: " << what << " failed with a non-standard exception\n";
  }
}

asio::awaitable<void> Serve(tcp::acceptor& acceptor, Shared& shared) {
  for (;;) {
    auto [ec, socket] = co_await acceptor.async_accept(kTuple);
    if (!acceptor.is_open() || ec == asio::error::operation_aborted) co_return;
    if (ec) {  // e.g. out of descriptors: pause rather than spin
      asio::steady_timer pause(acceptor.get_executor(), 50ms);
      auto [ignored] = co_await pause.async_wait(kTuple);
      (void)ignored;
      continue;
    }
    auto on_done = [](std::exception_ptr error) { ReportBug("connection", error); };
    asio::co_spawn(acceptor.get_executor(), Connection(std::move(socket), shared),
                   std::move(on_done));
  }
}

}  // namespace fake_chat_internal

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

struct FakeChatServer::Impl {
  fake_chat_internal::Shared shared;  // declared first: destroyed after the io_context
  std::mutex lifecycle;               // serializes Start and Stop
  bool started = false;               // guarded by lifecycle
  std::unique_ptr<asio::io_context> io;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::thread thread;
};

FakeChatServer::FakeChatServer(Options options) : impl_(std::make_unique<Impl>()) {
  impl_->shared.options = std::move(options);
}

FakeChatServer::~FakeChatServer() { Stop(); }

Result<void> FakeChatServer::Start() {
  std::lock_guard lock(impl_->lifecycle);
  if (impl_->started) return Err(Errc::kFailedPrecondition, "FakeChatServer already started");
  impl_->started = true;
  impl_->io = std::make_unique<asio::io_context>(1);
  impl_->acceptor = std::make_unique<tcp::acceptor>(*impl_->io);
  tcp::acceptor& acceptor = *impl_->acceptor;
  boost::system::error_code ec;
  tcp::endpoint endpoint(asio::ip::address_v4::loopback(), impl_->shared.options.port);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Err(Errc::kUnavailable, "fake chat server cannot listen on 127.0.0.1:" +
                                       std::to_string(endpoint.port()) + ": " + ec.message());
  }
  {
    std::lock_guard state_lock(impl_->shared.mutex);
    impl_->shared.port = acceptor.local_endpoint().port();
  }
  auto on_done = [](std::exception_ptr error) { fake_chat_internal::ReportBug("server", error); };
  asio::co_spawn(*impl_->io, fake_chat_internal::Serve(acceptor, impl_->shared),
                 std::move(on_done));
  impl_->thread = std::thread([io = impl_->io.get()] { io->run(); });
  return Ok();
}

void FakeChatServer::Stop() {
  std::lock_guard lock(impl_->lifecycle);
  if (!impl_->io) return;
  impl_->io->stop();
  if (impl_->thread.joinable()) impl_->thread.join();
  // The acceptor before its io_context; destroying the io_context destroys the suspended
  // connection coroutines and closes their sockets.
  impl_->acceptor.reset();
  impl_->io.reset();
}

std::uint16_t FakeChatServer::port() const {
  std::lock_guard lock(impl_->shared.mutex);
  return impl_->shared.port;
}

std::uint64_t FakeChatServer::request_count() const {
  std::lock_guard lock(impl_->shared.mutex);
  return impl_->shared.count;
}

std::optional<FakeChatRequest> FakeChatServer::last_request() const {
  std::lock_guard lock(impl_->shared.mutex);
  return impl_->shared.last;
}

void FakeChatServer::FailNext(int count, int status) {
  std::lock_guard lock(impl_->shared.mutex);
  for (int i = 0; i < count; ++i) {
    impl_->shared.queued.push_back(
        {status,
         fake_chat_internal::ErrorBody("injected failure " + std::to_string(status),
                                       status >= 500 ? "server_error" : "invalid_request_error")});
  }
}

void FakeChatServer::HangNext(int count) {
  std::lock_guard lock(impl_->shared.mutex);
  for (int i = 0; i < count; ++i) impl_->shared.queued.push_back({0, "", /*hang=*/true});
}

void FakeChatServer::ReplyNext(int status, std::string body) {
  std::lock_guard lock(impl_->shared.mutex);
  impl_->shared.queued.push_back({status, std::move(body)});
}

std::string FakeChatServer::CompletionBody(std::string_view content, std::string_view model) {
  namespace json = boost::json;
  json::object message{{"role", "assistant"}, {"content", content}};
  json::object choice{{"index", 0}, {"message", std::move(message)}, {"finish_reason", "stop"}};
  json::object usage{{"prompt_tokens", 0}, {"completion_tokens", 0}, {"total_tokens", 0}};
  json::object body{{"id", "chatcmpl-fake"},
                    {"object", "chat.completion"},
                    {"created", 0},
                    {"model", model},
                    {"choices", json::array{std::move(choice)}},
                    {"usage", std::move(usage)}};
  return json::serialize(body);
}

}  // namespace reckon::agent
