#include "reckon/api/protocol/frame_stream.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

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

FrameStream::FrameStream(std::unique_ptr<ByteStream> stream, FrameLimits limits)
    : stream_(std::move(stream)), limits_(limits), peer_(stream_->peer()) {}

FrameStream::FrameStream(asio::ip::tcp::socket socket, FrameLimits limits)
    : FrameStream(MakeTcpByteStream(std::move(socket)), limits) {}

asio::awaitable<Result<void>> FrameStream::Fill(std::size_t n, std::string_view where) {
  if (in_end_ - in_begin_ >= n) co_return Ok();
  // Make room: move what is left to the front, grow if one frame needs more.
  if (in_begin_ > 0) {
    std::memmove(in_.data(), in_.data() + in_begin_, in_end_ - in_begin_);
    in_end_ -= in_begin_;
    in_begin_ = 0;
  }
  if (in_.size() < std::max<std::size_t>(n, 64 * 1024)) in_.resize(std::max<std::size_t>(n, 64 * 1024));
  while (in_end_ < n) {
    auto [ec, got] =
        co_await stream_->ReadSome(asio::buffer(in_.data() + in_end_, in_.size() - in_end_));
    if (ec) {
      co_return StreamError(ec, in_end_ == 0 ? "" : std::string(where) + " (truncated frame)");
    }
    in_end_ += got;
  }
  co_return Ok();
}

asio::awaitable<Result<Frame>> FrameStream::Read() {
  if (closed_) co_return Err(Errc::kUnavailable, "connection is closed");
  RECKON_CO_TRY(co_await Fill(8, "inside a frame's header"));
  std::array<std::byte, 8> first{};
  std::memcpy(first.data(), in_.data() + in_begin_, 8);
  RECKON_CO_TRY(std::size_t rest, SegmentTableRemainder(first, limits_));
  RECKON_CO_TRY(co_await Fill(8 + rest, "inside a frame's segment table"));
  const std::span<const std::byte> table(in_.data() + in_begin_, 8 + rest);
  RECKON_CO_TRY(std::size_t body, BodyBytes(table, limits_));
  const std::size_t total = table.size() + body;
  RECKON_CO_TRY(co_await Fill(total, "inside a frame's body"));
  // Copied into word-aligned memory that Cap'n Proto reads in place.
  auto words = kj::heapArray<capnp::word>(total / 8);
  std::memcpy(words.begin(), in_.data() + in_begin_, total);
  in_begin_ += total;
  if (in_begin_ == in_end_) in_begin_ = in_end_ = 0;
  co_return Frame(kj::mv(words));
}

void FrameStream::Send(Frame frame) {
  if (closed_) return;
  queued_bytes_ += frame.bytes().size();
  queue_.push_back(std::move(frame));
  if (!writing_) {
    writing_ = true;
    asio::co_spawn(stream_->executor(), WriteLoop(), asio::detached);
  }
}

asio::awaitable<void> FrameStream::WriteLoop() {
  auto self = shared_from_this();
  while (!queue_.empty() && !closed_) {
    // Gather what is queued now into one write.
    std::deque<Frame> batch;
    batch.swap(queue_);
    std::vector<asio::const_buffer> buffers;
    buffers.reserve(batch.size());
    std::size_t bytes = 0;
    for (const Frame& frame : batch) {
      buffers.emplace_back(frame.bytes().data(), frame.bytes().size());
      bytes += frame.bytes().size();
    }
    auto [ec, n] = co_await stream_->Write(buffers);
    if (closed_) break;  // Close() already dropped the queue and its count
    queued_bytes_ -= bytes;
    if (ec) {
      Close();
      break;
    }
  }
  writing_ = false;
}

void FrameStream::Close() {
  if (closed_) return;
  closed_ = true;
  stream_->Close();
  queue_.clear();
  queued_bytes_ = 0;
}

}  // namespace reckon::api
