// AcceptLoop on a real acceptor on 127.0.0.1, with this process out of file descriptors (its
// open-files limit lowered to the descriptors it holds, tests/support/open_files_limit.h): a
// client that connects meanwhile waits in the backlog while every accept fails with EMFILE.
#include "reckon/base/accept_loop.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <atomic>
#include <future>
#include <thread>

#include "tests/support/http_probe.h"
#include "tests/support/open_files_limit.h"

namespace reckon {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using asio::ip::tcp;

// Connects `fd` to 127.0.0.1:port (blocking; needs no new descriptor).
bool ConnectTo(int fd, std::uint16_t port) {
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0;
}

// Calls `check` every 10 ms until it holds (true) or `timeout` passes (false).
template <class Check>
bool Within(std::chrono::milliseconds timeout, Check check) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (!check()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

class AcceptLoopTest : public ::testing::Test {
 protected:
  // A loop listening on 127.0.0.1 (any port), run by a thread of its own.
  void Start(AcceptBackoff backoff) {
    loop_ = std::make_shared<AcceptLoop>(io_.get_executor(), "test", backoff);
    tcp::acceptor& acceptor = loop_->acceptor();
    const tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
    acceptor.open(endpoint.protocol());
    acceptor.bind(endpoint);
    acceptor.listen();
    port_ = acceptor.local_endpoint().port();
    auto on_accept = [this](tcp::socket socket) {
      accepted_.push_back(std::move(socket));
      accepted_count_ = accepted_.size();
    };
    asio::co_spawn(io_, AcceptLoop::Run(loop_, std::move(on_accept)), [this](std::exception_ptr) {
      loop_done_ = true;
    });
    thread_ = std::thread([this] { io_.run(); });
  }

  void TearDown() override {
    if (!thread_.joinable()) return;
    std::promise<void> stopped;
    asio::post(io_, [&] {
      loop_->Stop();
      accepted_.clear();
      stopped.set_value();
    });
    stopped.get_future().wait();
    work_.reset();
    io_.stop();
    thread_.join();
  }

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(io_);
  std::shared_ptr<AcceptLoop> loop_;
  std::uint16_t port_ = 0;
  std::vector<tcp::socket> accepted_;  // on the loop's thread
  std::atomic<std::size_t> accepted_count_{0};
  std::atomic<bool> loop_done_{false};
  std::thread thread_;
};

TEST_F(AcceptLoopTest, BacksOffWhileOutOfDescriptorsAndTakesTheWaitingPeerAfter) {
  Start({.first = 10ms, .cap = 200ms});
  testing::RawSocket early("127.0.0.1", port_);
  ASSERT_TRUE(Within(5s, [&] { return accepted_count_ == 1; }));
  EXPECT_EQ(loop_->counts().failures, 0u);

  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);  // the peer's socket, before the limit
  ASSERT_GE(fd, 0);
  const AcceptCounts before = loop_->counts();
  {
    auto full = testing::OpenFilesLimit::Exhaust(0);
    ASSERT_TRUE(full) << full.error().ToString();
    ASSERT_TRUE(ConnectTo(fd, port_));
    std::this_thread::sleep_for(500ms);
    const AcceptCounts during = loop_->counts();
    // Waits of 10, 20, 40, 80, 160, 200 ms: about 6 attempts in 500 ms, where a loop that
    // retried at once would make thousands.
    EXPECT_GE(during.failures - before.failures, 3u);
    EXPECT_LE(during.attempts - before.attempts, 12u);
    EXPECT_EQ(during.episodes - before.episodes, 1u) << "one episode, however many failures";
    EXPECT_EQ(accepted_count_, 1u);
  }  // the limit is back: the waiting connection is taken within one back-off (200 ms)
  EXPECT_TRUE(Within(5s, [&] { return accepted_count_ == 2; }));
  EXPECT_EQ(loop_->counts().episodes - before.episodes, 1u);
  ::close(fd);
}

TEST_F(AcceptLoopTest, StopEndsTheLoopDuringABackOff) {
  Start({.first = 10s, .cap = 10s});
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  {
    auto full = testing::OpenFilesLimit::Exhaust(0);
    ASSERT_TRUE(full) << full.error().ToString();
    ASSERT_TRUE(ConnectTo(fd, port_));
    ASSERT_TRUE(Within(5s, [&] { return loop_->counts().failures >= 1; }));
  }
  asio::post(io_, [this] { loop_->Stop(); });
  // Not ten seconds: Stop cancels the wait, and the loop ends without taking the peer.
  EXPECT_TRUE(Within(5s, [&] { return loop_done_.load(); }));
  EXPECT_EQ(accepted_count_, 0u);
  ::close(fd);
}

}  // namespace
}  // namespace reckon
