#include "reckon/protocol/frame_stream.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>

#include <array>
#include <cstring>
#include <vector>

namespace reckon::api {
namespace asio = boost::asio;

namespace {


Error StreamError(const boost::system::error_code& ec, std::string_view what) {
  if (ec == asio::error::eof) {
    return Err(Errc::kUnavailable, std::string("peer closed the connection") +
                                       (what.empty() ? "" : " " + std::string(what)));
  }
  return Err(Errc::kUnavailable, "connection failed " + std::string(what) + ": " + ec.message());
}

}  // namespace

FrameStream::FrameStream(std::unique_ptr<ByteStream> stream, FrameLimits limits,
                         MemoryBudget* budget)
    : stream_(std::move(stream)),
      limits_(limits),
      budget_(budget),
      buffer_(budget),
      peer_(stream_->peer()) {}

FrameStream::FrameStream(asio::ip::tcp::socket socket, FrameLimits limits, MemoryBudget* budget)
    : FrameStream(MakeTcpByteStream(std::move(socket)), limits, budget) {}

asio::awaitable<Result<void>> FrameStream::Fill(std::size_t n, std::string_view where) {
  while (buffer_.size() < n) {
    // Closed while a completed read's resumption was queued: never read again (Linger may be
    // reading this stream now, and a TLS stream takes one read at a time).
    if (closed_) co_return Err(Errc::kUnavailable, "connection is closed");
    RECKON_CO_TRY(std::span<std::byte> room, buffer_.Room(n));
    auto [ec, got] = co_await stream_->ReadSome(asio::buffer(room.data(), room.size()));
    if (ec) {
      read_failure_ = ec;
      co_return StreamError(ec, buffer_.size() == 0 ? ""
                                                    : std::string(where) + " (truncated frame)");
    }
    buffer_.Received(got);
  }
  co_return Ok();
}

asio::awaitable<Result<Frame>> FrameStream::Read() {
  if (closed_) co_return Err(Errc::kUnavailable, "connection is closed");
  reading_ = true;
  auto frame = co_await ReadFrame();
  reading_ = false;
  if (closed_) buffer_.Release();  // closed while the read was pending
  co_return frame;
}

asio::awaitable<Result<Frame>> FrameStream::ReadFrame() {
  RECKON_CO_TRY(co_await Fill(8, "inside a frame's header"));
  std::array<std::byte, 8> first{};
  std::memcpy(first.data(), buffer_.data().data(), 8);
  RECKON_CO_TRY(std::size_t rest, SegmentTableRemainder(first, limits_));
  RECKON_CO_TRY(co_await Fill(8 + rest, "inside a frame's segment table"));
  const std::span<const std::byte> table = buffer_.data().first(8 + rest);
  RECKON_CO_TRY(std::size_t body, BodyBytes(table, limits_));
  const std::size_t total = table.size() + body;
  RECKON_CO_TRY(co_await Fill(total, "inside a frame's body"));
  // Copied into word-aligned memory that Cap'n Proto reads in place.
  auto words = kj::heapArray<capnp::word>(total / 8);
  std::memcpy(words.begin(), buffer_.data().data(), total);
  buffer_.Consume(total);
  co_return Frame(kj::mv(words));
}

void FrameStream::Send(Frame frame) {
  if (closed_) return;
  const std::size_t size = frame.bytes().size();
  if (budget_) budget_->Charge(size);
  unstarted_bytes_ += size;
  queued_bytes_ += size;
  queue_.push_back(std::move(frame));
  if (!writing_) {
    writing_ = true;
    asio::co_spawn(stream_->executor(), WriteLoop(), asio::detached);
  }
}

void FrameStream::Written(std::size_t n) {
  if (closed_ || n == 0) return;  // Close() already dropped the count
  queued_bytes_ -= n;
  bytes_sent_ += n;
  if (on_written_) on_written_();
}

asio::awaitable<void> FrameStream::WriteLoop() {
  auto self = shared_from_this();
  while (!queue_.empty() && !closed_) {
    // Gather what is queued now into one write.
    std::deque<Frame> batch;
    batch.swap(queue_);
    const std::size_t bytes = std::exchange(unstarted_bytes_, 0);
    std::vector<asio::const_buffer> buffers;
    buffers.reserve(batch.size());
    for (const Frame& frame : batch) {
      buffers.emplace_back(frame.bytes().data(), frame.bytes().size());
    }
    // Called after each system call: progress is counted as it happens, so a peer that reads
    // slowly is told apart from one that does not read at all.
    std::size_t counted = 0;
    auto progress = [this, &counted](std::size_t done) {
      Written(done - counted);
      counted = done;
    };
    auto [ec, n] = co_await stream_->Write(buffers, std::move(progress));
    Written(n - counted);
    batch.clear();
    if (budget_) budget_->Release(bytes);
    if (closed_) break;
    if (ec) {
      Close();
      break;
    }
  }
  writing_ = false;
}

void FrameStream::StopFrames() {
  closed_ = true;
  if (budget_) budget_->Release(unstarted_bytes_);
  queue_.clear();
  unstarted_bytes_ = 0;
  queued_bytes_ = 0;
  if (!reading_) buffer_.Release();
}

void FrameStream::Close() {
  if (closed_) return;
  StopFrames();
  stream_->Close();
}

void FrameStream::CloseWithLast(Frame last) {
  if (closed_) return;
  const bool nothing_half_written = !writing_;
  StopFrames();
  stream_->Cancel();  // a pending read or write completes now, with operation_aborted
  std::optional<Frame> to_send;
  if (nothing_half_written) to_send.emplace(std::move(last));
  asio::co_spawn(stream_->executor(), Linger(std::move(to_send)), asio::detached);
}

asio::awaitable<void> FrameStream::Linger(std::optional<Frame> last) {
  auto self = shared_from_this();
  asio::steady_timer deadline(stream_->executor(), kLinger);
  auto on_deadline = [self](const boost::system::error_code& ec) {
    if (!ec) self->stream_->Close();  // ends the write or read below
  };
  deadline.async_wait(std::move(on_deadline));
  if (last) {
    const asio::const_buffer bytes(last->bytes().data(), last->bytes().size());
    (void)co_await stream_->Write(std::span(&bytes, 1));
  }
  stream_->ShutdownSend();
  std::array<std::byte, 4096> discard;
  std::size_t discarded = 0;
  while (discarded < kLingerBytes && stream_->is_open()) {
    auto [ec, n] = co_await stream_->ReadSome(asio::buffer(discard));
    if (ec) break;
    discarded += n;
  }
  deadline.cancel();
  stream_->Close();
}

}  // namespace reckon::api
