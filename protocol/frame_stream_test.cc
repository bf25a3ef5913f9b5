// FrameStream over real TCP on 127.0.0.1: a header that announces 8 MiB costs only what arrives;
// a whole frame still reads; growth the budget refuses fails the read with resource_exhausted;
// replies count against the budget until written; CloseWithLast delivers its frame even when
// the peer has sent bytes the stream never read.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <capnp/message.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <optional>
#include <vector>

#include "reckon/protocol/client.h"
#include "reckon/protocol/close_reason.h"
#include "reckon/protocol/frame_stream.h"
#include "reckon/protocol/reckon.capnp.h"

namespace reckon::api {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

// A FrameStream on the accepting side of a loopback connection, and the plain socket of the
// connecting side, which the test writes and reads directly.
class FrameStreamTest : public ::testing::Test {
 protected:
  void Connect(MemoryBudget* budget, FrameLimits limits = {}) {
    asio::ip::tcp::acceptor acceptor(io_, {asio::ip::make_address("127.0.0.1"), 0});
    peer_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(acceptor.local_endpoint().port());
    ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    ASSERT_EQ(::connect(peer_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    auto socket = acceptor.accept();
    stream_fd_ = socket.native_handle();
    stream_ = std::make_shared<FrameStream>(std::move(socket), limits, budget);
  }
  void TearDown() override {
    if (peer_ >= 0) ::close(peer_);
  }

  void Send(const std::vector<std::byte>& bytes) {
    ASSERT_EQ(::send(peer_, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  // Runs the loop until the stream has taken every byte the kernel holds for it.
  void RunUntilDrained() {
    int pending = 1;
    for (int i = 0; i < 2000 && pending > 0; ++i) {
      io_.run_one_for(1ms);
      ASSERT_EQ(::ioctl(stream_fd_, FIONREAD, &pending), 0);
    }
    for (int i = 0; i < 10; ++i) io_.poll();
  }

  asio::io_context io_;
  int peer_ = -1;
  int stream_fd_ = -1;  // the accepted socket, for FIONREAD
  std::shared_ptr<FrameStream> stream_;
};

// The first 8 bytes of a one-segment frame of `total` bytes (table included).
std::vector<std::byte> Header(std::size_t total) {
  std::vector<std::byte> out(8);
  const std::uint32_t words = static_cast<std::uint32_t>((total - 8) / 8);
  std::memcpy(out.data() + 4, &words, 4);
  return out;
}

asio::awaitable<void> ReadInto(std::shared_ptr<FrameStream> stream,
                               std::optional<Result<Frame>>* out) {
  out->emplace(co_await stream->Read());
}

TEST_F(FrameStreamTest, AnAnnouncedBodyCostsOnlyWhatArrives) {
  MemoryBudget budget(64u << 20);
  Connect(&budget);
  std::optional<Result<Frame>> frame;
  asio::co_spawn(io_, ReadInto(stream_, &frame), asio::detached);
  const std::size_t total = 8u << 20;
  Send(Header(total));
  std::size_t sent = 8;
  RunUntilDrained();
  EXPECT_LE(budget.used(), ReadBuffer::kKeepBytes) << "a header announcing 8 MiB";
  const std::vector<std::byte> chunk(300'000, std::byte{0});
  while (sent + chunk.size() < total) {
    Send(chunk);
    sent += chunk.size();
    RunUntilDrained();
    ASSERT_LE(budget.used(), std::max(ReadBuffer::kKeepBytes, 2 * sent)) << sent;
  }
  EXPECT_FALSE(frame) << "the frame is not whole yet";
  stream_->Close();
  for (int i = 0; i < 100 && !frame; ++i) io_.run_one_for(1ms);
  ASSERT_TRUE(frame);
  EXPECT_FALSE(*frame);
  EXPECT_EQ(budget.used(), 0u) << "closing gives the buffer back";
}

TEST_F(FrameStreamTest, GrowthOverTheBudgetFailsTheRead) {
  MemoryBudget budget(1u << 20);
  FrameLimits limits;
  Connect(&budget, limits);
  std::optional<Result<Frame>> frame;
  asio::co_spawn(io_, ReadInto(stream_, &frame), asio::detached);
  Send(Header(4u << 20));
  const std::vector<std::byte> chunk(128 * 1024, std::byte{0});
  for (std::size_t sent = 0; sent < (3u << 20) && !frame; sent += chunk.size()) {
    Send(chunk);
    int pending = 1;
    for (int i = 0; i < 2000 && pending > 0 && !frame; ++i) {
      io_.run_one_for(1ms);
      ASSERT_EQ(::ioctl(stream_fd_, FIONREAD, &pending), 0);
    }
  }
  ASSERT_TRUE(frame);
  ASSERT_FALSE(*frame);
  EXPECT_EQ(frame->error().code(), Errc::kResourceExhausted) << frame->error().ToString();
  EXPECT_LE(budget.used(), budget.limit());
}

TEST_F(FrameStreamTest, RepliesAreChargedUntilWritten) {
  MemoryBudget budget(64u << 20);
  Connect(&budget);
  capnp::MallocMessageBuilder message;
  message.initRoot<wire::Response>().setId(5);
  Frame reply = EncodeFrame(message);
  const std::size_t size = reply.bytes().size();
  stream_->Send(std::move(reply));
  EXPECT_EQ(budget.used(), size);
  EXPECT_EQ(stream_->queued_bytes(), size);
  for (int i = 0; i < 100 && stream_->queued_bytes() > 0; ++i) io_.run_one_for(1ms);
  for (int i = 0; i < 10; ++i) io_.poll();
  EXPECT_EQ(stream_->queued_bytes(), 0u);
  EXPECT_EQ(stream_->bytes_sent(), size);
  EXPECT_EQ(budget.used(), 0u);
}

TEST_F(FrameStreamTest, CloseWithLastArrivesDespiteUnreadInput) {
  MemoryBudget budget(64u << 20);
  Connect(&budget);
  // The peer sends 64 KiB the stream never reads: a plain close would reset the connection.
  Send(std::vector<std::byte>(64 * 1024, std::byte{1}));
  stream_->CloseWithLast(EncodeCloseReason(Err(Errc::kResourceExhausted, "because")));
  EXPECT_TRUE(stream_->closed());
  std::vector<std::byte> got;
  bool ended = false;
  for (int i = 0; i < 5000 && !ended; ++i) {
    io_.run_one_for(1ms);
    pollfd p{peer_, POLLIN, 0};
    while (::poll(&p, 1, 0) == 1) {
      std::byte buffer[4096];
      const ssize_t n = ::recv(peer_, buffer, sizeof buffer, 0);
      if (n <= 0) {
        ended = true;
        break;
      }
      got.insert(got.end(), buffer, buffer + n);
    }
  }
  EXPECT_TRUE(ended);
  auto frame = ParseFrame(got, FrameLimits{});
  ASSERT_TRUE(frame) << frame.error().ToString() << " (" << got.size() << " bytes)";
  Reply reply(std::move(frame).value(), FrameLimits{});
  EXPECT_EQ(reply.get().getId(), kCloseReasonId);
  ASSERT_TRUE(reply.get().getResult().isError());
  EXPECT_STREQ(reply.get().getResult().getError().getMessage().cStr(), "because");
  EXPECT_STREQ(reply.get().getResult().getError().getCode().cStr(), "resource_exhausted");
}

}  // namespace
}  // namespace reckon::api
