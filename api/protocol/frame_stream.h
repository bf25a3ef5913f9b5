// FrameStream: one connection (plain TCP or TLS: api/protocol/byte_stream.h) carrying frames
// (api/protocol/frame.h) both ways.
//
// Reading: Read() returns the next whole frame, checked against the limits before the body is
// allocated. At most one Read() may be pending at a time.
// Writing: Send() queues a frame and returns at once; one writer coroutine writes the queue in
// order, several frames per system call. queued_bytes() is how a caller applies backpressure
// (stop reading requests while the peer does not drain its replies).
//
// Lifetime and threads: always held by std::shared_ptr (the writer keeps it alive); every
// method runs on the stream's executor, which must be single-threaded (an io_context run by
// one thread, or a strand). Close() is idempotent; after it Read() fails and Send() drops.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "reckon/api/protocol/byte_stream.h"
#include "reckon/api/protocol/frame.h"
#include "reckon/base/error.h"

namespace reckon::api {

class FrameStream : public std::enable_shared_from_this<FrameStream> {
 public:
  FrameStream(std::unique_ptr<ByteStream> stream, FrameLimits limits);
  // Plain TCP.
  FrameStream(boost::asio::ip::tcp::socket socket, FrameLimits limits);
  FrameStream(const FrameStream&) = delete;
  FrameStream& operator=(const FrameStream&) = delete;

  // The next frame. Errc::kUnavailable when the peer closed or the socket failed (the message
  // says which); Errc::kInvalidArgument for a frame that breaks the limits or the framing.
  boost::asio::awaitable<Result<Frame>> Read();

  void Send(Frame frame);
  std::size_t queued_bytes() const { return queued_bytes_; }

  void Close();
  bool closed() const { return closed_; }
  const std::string& peer() const { return peer_; }
  const FrameLimits& limits() const { return limits_; }
  const char* kind() const { return stream_->kind(); }  // "tcp" or "tls"

 private:
  boost::asio::awaitable<void> WriteLoop();

  // Reads at least `n` bytes into in_ (beyond in_begin_), as many as the socket has.
  boost::asio::awaitable<Result<void>> Fill(std::size_t n, std::string_view where);

  std::unique_ptr<ByteStream> stream_;
  FrameLimits limits_;
  // Bytes received and not yet returned as frames, in in_[in_begin_, in_end_): one read
  // system call usually brings several frames.
  std::vector<std::byte> in_;
  std::size_t in_begin_ = 0;
  std::size_t in_end_ = 0;
  std::string peer_;
  std::deque<Frame> queue_;
  std::size_t queued_bytes_ = 0;
  bool writing_ = false;
  bool closed_ = false;
};

}  // namespace reckon::api
