// MetricsListener out of file descriptors: a scraper connects while the process can open no
// descriptor, so every accept fails with EMFILE while the connection waits in the backlog. The
// listener must back off (a few attempts, little CPU) rather than spin, and serve the waiting
// scraper once descriptors are free again. The process's own open-files limit is lowered
// (tests/support/open_files_limit.h), so the failures are the kernel's, not a fake's.
#include "reckon/telemetry/metrics_listener.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "tests/support/open_files_limit.h"

namespace reckon {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

// CPU time this process has used so far (every thread, user and system).
std::chrono::microseconds ProcessCpu() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto us = [](const timeval& t) { return std::int64_t{t.tv_sec} * 1000000 + t.tv_usec; };
  return std::chrono::microseconds(us(usage.ru_utime) + us(usage.ru_stime));
}

// What the server sends on `fd` until it closes it, for at most `timeout`.
std::string ReadUntilClosed(int fd, std::chrono::milliseconds timeout) {
  std::string out;
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    char buffer[4096];
    const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  return out;
}

class MetricsListenerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_.Counter("reckon_test_total", "a counter for the test").Get().Inc();
    listener_ = std::make_unique<MetricsListener>(io_.get_executor(), registry_);
    ASSERT_TRUE(listener_->Listen("127.0.0.1:0"));
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    std::promise<void> stopped;
    asio::post(io_, [&] {
      listener_->Stop();
      stopped.set_value();
    });
    stopped.get_future().wait();
    work_.reset();
    io_.stop();
    thread_.join();
    listener_.reset();
  }

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(io_);
  MetricsRegistry registry_;
  std::unique_ptr<MetricsListener> listener_;
  std::thread thread_;
};

TEST_F(MetricsListenerTest, BacksOffWhileOutOfDescriptorsAndServesTheWaitingScraperAfter) {
  // The scraper's socket exists before the limit; its connection then waits in the backlog.
  const int scraper = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(scraper, 0);
  const auto cpu_before = ProcessCpu();
  {
    auto full = testing::OpenFilesLimit::Exhaust(0);
    ASSERT_TRUE(full) << full.error().ToString();
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(listener_->port());
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(scraper, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
    std::this_thread::sleep_for(500ms);
    const auto cpu = ProcessCpu() - cpu_before;
    // A loop that retries at once burns a core for the whole half second; one that backs off
    // wakes a handful of times.
    EXPECT_LT(cpu, 200ms) << "the accept loop spun: " << cpu.count() << " us of CPU in 500 ms";
    // Counted by the loop itself (base/accept_loop.h): waits of 10, 20, 40 ... ms.
    const AcceptCounts counts = listener_->accept_counts();
    EXPECT_GE(counts.failures, 3u);
    EXPECT_LE(counts.attempts, 12u);
    EXPECT_EQ(counts.episodes, 1u);
  }  // the limit is back
  const std::string_view get = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  ASSERT_EQ(::send(scraper, get.data(), get.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(get.size()));
  const std::string reply = ReadUntilClosed(scraper, 5s);
  ::close(scraper);
  EXPECT_EQ(reply.rfind("HTTP/1.1 200", 0), 0u) << reply;
  EXPECT_NE(reply.find("reckon_test_total 1"), std::string::npos) << reply;
  EXPECT_EQ(listener_->accept_counts().episodes, 1u);
}

}  // namespace
}  // namespace reckon
