#include "reckon/telemetry/otlp_exporter.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <spdlog/spdlog.h>

#include <atomic>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "reckon/telemetry/otlp_endpoint.h"

namespace reckon {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::awaitable;
using asio::ip::tcp;

class OtlpExporter::Worker {
 public:
  Worker(OtlpExporterOptions options, OtlpEndpoint endpoint)
      : options_(std::move(options)), endpoint_(std::move(endpoint)) {
    asio::co_spawn(io_, Loop(), asio::detached);
    thread_ = std::thread([this] { io_.run(); });
  }

  ~Worker() {
    asio::post(io_, [this] { BeginStop(); });
    thread_.join();
  }

  void Push(OtlpSpan span) {
    bool wake = false;
    {
      std::lock_guard lock(mutex_);
      if (queue_.size() >= options_.max_queue) {
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      queue_.push_back(std::move(span));
      if (queue_.size() >= options_.max_batch && !wake_posted_) wake = wake_posted_ = true;
    }
    if (wake) asio::post(io_, [this] { timer_.cancel(); });
  }

  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<std::uint64_t> exported_{0};

 private:
  enum class Reply { kAccepted, kRetry, kRefused };

  std::size_t Queued() {
    std::lock_guard lock(mutex_);
    return queue_.size();
  }

  std::vector<OtlpSpan> TakeBatch() {
    std::lock_guard lock(mutex_);
    wake_posted_ = false;
    const std::size_t n = std::min(queue_.size(), options_.max_batch);
    std::vector<OtlpSpan> batch(std::make_move_iterator(queue_.begin()),
                                std::make_move_iterator(queue_.begin() + n));
    queue_.erase(queue_.begin(), queue_.begin() + n);
    return batch;
  }

  // On the exporter thread: no more waiting; after the grace, no more sending.
  void BeginStop() {
    stopping_ = true;
    timer_.cancel();
    grace_.expires_after(options_.shutdown_grace);
    grace_.async_wait([this](boost::system::error_code) {
      giving_up_ = true;
      timer_.cancel();
      if (in_flight_ != nullptr) in_flight_->cancel();
      if (resolving_ != nullptr) resolving_->cancel();
    });
  }

  awaitable<void> Loop() {
    for (;;) {
      if (!stopping_ && Queued() < options_.max_batch) {
        timer_.expires_after(options_.flush_interval);
        co_await timer_.async_wait(asio::as_tuple(asio::use_awaitable));
      }
      for (auto batch = TakeBatch(); !batch.empty(); batch = TakeBatch()) {
        if (giving_up_ || (stopping_ && !healthy_)) {
          dropped_.fetch_add(batch.size(), std::memory_order_relaxed);
          continue;
        }
        co_await Send(std::move(batch));
        if (!stopping_ && Queued() < options_.max_batch) break;
      }
      if (stopping_) break;
    }
    grace_.cancel();
  }

  awaitable<void> Send(std::vector<OtlpSpan> batch) {
    const std::string body = OtlpTracesJson(options_.resource, batch);
    auto backoff = options_.first_backoff;
    for (int attempt = 0;; ++attempt) {
      const Reply reply = co_await PostOnce(body);
      if (reply == Reply::kAccepted) {
        exported_.fetch_add(batch.size(), std::memory_order_relaxed);
        if (!healthy_) spdlog::info("OTLP: the collector at {} accepts spans again", options_.endpoint);
        healthy_ = true;
        co_return;
      }
      if (reply == Reply::kRefused || attempt >= options_.max_retries || stopping_) break;
      timer_.expires_after(backoff);
      co_await timer_.async_wait(asio::as_tuple(asio::use_awaitable));
      backoff *= 2;
    }
    dropped_.fetch_add(batch.size(), std::memory_order_relaxed);
    if (healthy_) {
      spdlog::warn("OTLP: dropped {} spans: the collector at {} did not accept them (it is "
                   "counted; the engine is not slowed); check that it runs and listens there",
                   batch.size(), options_.endpoint);
    }
    healthy_ = false;
  }

  // One POST over a fresh connection, bounded by request_timeout.
  awaitable<Reply> PostOnce(const std::string& body) {
    if (giving_up_) co_return Reply::kRefused;
    tcp::resolver resolver(io_);
    resolving_ = &resolver;
    auto [resolve_error, endpoints] = co_await resolver.async_resolve(
        endpoint_.host, endpoint_.port, asio::as_tuple(asio::use_awaitable));
    resolving_ = nullptr;
    if (resolve_error || giving_up_) co_return Reply::kRetry;
    beast::tcp_stream stream(io_);
    in_flight_ = &stream;
    Reply reply = co_await Exchange(stream, endpoints, body);
    in_flight_ = nullptr;
    co_return reply;
  }

  awaitable<Reply> Exchange(beast::tcp_stream& stream, const tcp::resolver::results_type& to,
                            const std::string& body) {
    stream.expires_after(options_.request_timeout);
    auto [connect_error, connected] =
        co_await stream.async_connect(to, asio::as_tuple(asio::use_awaitable));
    if (connect_error) co_return Reply::kRetry;
    http::request<http::string_body> request{http::verb::post, endpoint_.target, 11};
    request.set(http::field::host, endpoint_.host + ":" + endpoint_.port);
    request.set(http::field::content_type, "application/json");
    request.set(http::field::user_agent, "reckon-otlp");
    request.keep_alive(false);
    request.body() = body;
    request.prepare_payload();
    auto [write_error, written] =
        co_await http::async_write(stream, request, asio::as_tuple(asio::use_awaitable));
    if (write_error) co_return Reply::kRetry;
    beast::flat_buffer buffer;
    http::response<http::string_body> response;
    auto [read_error, read] =
        co_await http::async_read(stream, buffer, response, asio::as_tuple(asio::use_awaitable));
    if (read_error) co_return Reply::kRetry;
    boost::system::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    const unsigned status = response.result_int();
    if (status >= 200 && status < 300) co_return Reply::kAccepted;
    if (status == 408 || status == 429 || status >= 500) co_return Reply::kRetry;
    co_return Reply::kRefused;
  }

  const OtlpExporterOptions options_;
  const OtlpEndpoint endpoint_;
  asio::io_context io_{1};
  asio::steady_timer timer_{io_};  // the flush interval and the backoff; cancelled to wake
  asio::steady_timer grace_{io_};  // shutdown_grace
  std::mutex mutex_;
  std::deque<OtlpSpan> queue_;  // guarded by mutex_
  bool wake_posted_ = false;    // guarded by mutex_
  // The exporter thread's own state.
  bool stopping_ = false;
  bool giving_up_ = false;
  bool healthy_ = true;  // the last batch was accepted
  beast::tcp_stream* in_flight_ = nullptr;
  tcp::resolver* resolving_ = nullptr;
  std::thread thread_;  // last: starts after every member exists
};

Result<std::unique_ptr<OtlpExporter>> OtlpExporter::Start(OtlpExporterOptions options) {
  RECKON_TRY(OtlpEndpoint endpoint, ParseOtlpEndpoint(options.endpoint));
  if (options.max_batch == 0 || options.max_queue == 0) {
    return Err(Errc::kInvalidArgument, "OTLP exporter: max_batch and max_queue must be positive");
  }
  auto worker = std::make_unique<Worker>(std::move(options), std::move(endpoint));
  return std::unique_ptr<OtlpExporter>(new OtlpExporter(std::move(worker)));
}

OtlpExporter::OtlpExporter(std::unique_ptr<Worker> worker) : worker_(std::move(worker)) {}
OtlpExporter::~OtlpExporter() = default;

void OtlpExporter::Push(OtlpSpan span) { worker_->Push(std::move(span)); }
std::uint64_t OtlpExporter::dropped() const {
  return worker_->dropped_.load(std::memory_order_relaxed);
}
std::uint64_t OtlpExporter::exported() const {
  return worker_->exported_.load(std::memory_order_relaxed);
}

}  // namespace reckon
