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
#include <pthread.h>

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
    request_ = {http::verb::post, endpoint_.target, 11};
    request_.set(http::field::host, endpoint_.host + ":" + endpoint_.port);
    request_.set(http::field::content_type, "application/json");
    request_.set(http::field::user_agent, "reckon-otlp");
    request_.keep_alive(true);
    asio::co_spawn(io_, Loop(), asio::detached);
    thread_ = std::thread([this] {
      pthread_setname_np(pthread_self(), "reckon-otlp");  // for top -H, perf, gdb
      io_.run();
    });
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
    Close();
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

  // One POST, bounded by request_timeout, on the connection kept from the last one when the
  // collector kept it open (HTTP/1.1 keep-alive), else on a fresh one. A kept connection that
  // turns out closed (the collector dropped it while idle) gets the request once more on a
  // fresh connection, which is not counted as a retry; one that times out does not.
  awaitable<Reply> PostOnce(const std::string& body) {
    if (giving_up_) co_return Reply::kRefused;
    if (stream_ != nullptr) {
      const Exchanged kept = co_await ExchangeOn(body);
      if (!kept.connection_lost || giving_up_) co_return kept.reply;
    }
    tcp::resolver resolver(io_);
    resolving_ = &resolver;
    auto [resolve_error, endpoints] = co_await resolver.async_resolve(
        endpoint_.host, endpoint_.port, asio::as_tuple(asio::use_awaitable));
    resolving_ = nullptr;
    if (resolve_error || giving_up_) co_return Reply::kRetry;
    stream_ = std::make_unique<beast::tcp_stream>(io_);
    in_flight_ = stream_.get();
    stream_->expires_after(options_.request_timeout);
    auto [connect_error, connected] =
        co_await stream_->async_connect(endpoints, asio::as_tuple(asio::use_awaitable));
    in_flight_ = nullptr;
    if (connect_error) {
      stream_.reset();
      co_return Reply::kRetry;
    }
    co_return (co_await ExchangeOn(body)).reply;
  }

  struct Exchanged {
    Reply reply = Reply::kRetry;
    bool connection_lost = false;  // closed or reset under the request (not a timeout)
  };

  // The request and its response on stream_, which stays open only if both sides keep it.
  awaitable<Exchanged> ExchangeOn(const std::string& body) {
    beast::tcp_stream& stream = *stream_;
    in_flight_ = &stream;
    stream.expires_after(options_.request_timeout);
    request_.body() = body;
    request_.prepare_payload();
    Exchanged out;
    auto [write_error, written] =
        co_await http::async_write(stream, request_, asio::as_tuple(asio::use_awaitable));
    boost::system::error_code error = write_error;
    http::response<http::string_body> response;
    if (!error) {
      auto [read_error, read] = co_await http::async_read(stream, buffer_, response,
                                                          asio::as_tuple(asio::use_awaitable));
      error = read_error;
    }
    in_flight_ = nullptr;
    request_.body().clear();
    if (error) {
      out.connection_lost = error != beast::error::timeout && !giving_up_;
      Close();
      co_return out;
    }
    if (response.keep_alive()) {
      stream.expires_never();
    } else {
      Close();
    }
    const unsigned status = response.result_int();
    if (status >= 200 && status < 300) {
      out.reply = Reply::kAccepted;
    } else if (status == 408 || status == 429 || status >= 500) {
      out.reply = Reply::kRetry;
    } else {
      out.reply = Reply::kRefused;
    }
    co_return out;
  }

  void Close() {
    if (stream_ == nullptr) return;
    boost::system::error_code ignored;
    stream_->socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.reset();
    buffer_.clear();
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
  std::unique_ptr<beast::tcp_stream> stream_;  // the connection kept open, if any
  beast::flat_buffer buffer_;                  // stream_'s read buffer
  http::request<http::string_body> request_;   // headers set once; the body per batch
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
