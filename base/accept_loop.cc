#include "reckon/base/accept_loop.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>

namespace reckon {

namespace asio = boost::asio;

namespace {
constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);
}  // namespace

bool IsResourceExhaustion(const boost::system::error_code& ec) {
  if (ec.category() != boost::system::system_category()) return false;
  const int code = ec.value();
  return code == EMFILE || code == ENFILE || code == ENOBUFS || code == ENOMEM;
}

bool IsConnectionLevel(const boost::system::error_code& ec) {
  if (ec.category() != boost::system::system_category()) return false;
  const int code = ec.value();
  // EPERM: a firewall rule refused this connection (accept(2), "Linux notes").
  return code == ECONNABORTED || code == ECONNRESET || code == EPROTO || code == EPERM ||
         code == EINTR;
}

AcceptLoop::AcceptLoop(asio::any_io_executor executor, std::string name, AcceptBackoff backoff)
    : acceptor_(executor), timer_(executor), name_(std::move(name)), backoff_(backoff) {}

asio::awaitable<void> AcceptLoop::Run(std::shared_ptr<AcceptLoop> loop, Handler handler) {
  while (!loop->stopped_ && loop->acceptor_.is_open()) {
    auto [ec, socket] = co_await loop->acceptor_.async_accept(kNoThrow);
    loop->attempts_.fetch_add(1, std::memory_order_relaxed);
    if (loop->stopped_ || !loop->acceptor_.is_open()) break;
    if (ec == asio::error::operation_aborted) break;
    if (ec) {
      co_await loop->Failed(ec);
      continue;
    }
    loop->Succeeded();
    handler(std::move(socket));
  }
}

asio::awaitable<void> AcceptLoop::Failed(const boost::system::error_code& ec) {
  failures_.fetch_add(1, std::memory_order_relaxed);
  if (IsConnectionLevel(ec)) {
    spdlog::debug("{}: a connection went away before it was accepted: {}", name_, ec.message());
    co_return;
  }
  if (next_wait_.count() == 0) {
    episodes_.fetch_add(1, std::memory_order_relaxed);
    episode_failures_ = 0;
    episode_began_ = std::chrono::steady_clock::now();
    next_wait_ = backoff_.first;
    spdlog::warn(
        "{}: accept failed: {}; waiting {} ms, then up to {} ms, between attempts until one "
        "succeeds{}",
        name_, ec.message(), backoff_.first.count(), backoff_.cap.count(),
        IsResourceExhaustion(ec)
            ? " (out of file descriptors or memory: raise the open-files limit, `ulimit -n`, "
              "or lower the connection limits)"
            : "");
  }
  ++episode_failures_;
  timer_.expires_after(next_wait_);
  next_wait_ = std::min(next_wait_ * 2, backoff_.cap);
  (void)co_await timer_.async_wait(kNoThrow);
}

void AcceptLoop::Succeeded() {
  if (next_wait_.count() == 0) return;
  const auto lasted = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - episode_began_);
  spdlog::info("{}: accepting again after {} failed accept(s) over {} ms", name_,
               episode_failures_, lasted.count());
  next_wait_ = std::chrono::milliseconds{0};
}

void AcceptLoop::Stop() {
  if (stopped_) return;
  stopped_ = true;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  timer_.cancel();
}

AcceptCounts AcceptLoop::counts() const {
  return AcceptCounts{attempts_.load(std::memory_order_relaxed),
                      failures_.load(std::memory_order_relaxed),
                      episodes_.load(std::memory_order_relaxed)};
}

}  // namespace reckon
