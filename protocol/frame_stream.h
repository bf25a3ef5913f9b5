// FrameStream: one connection (plain TCP or TLS: protocol/byte_stream.h) carrying frames
// (protocol/frame.h) both ways.
//
// Reading: Read() returns the next whole frame, checked against the limits before the body is
// read. The bytes are held in a ReadBuffer (protocol/read_buffer.h), which commits memory
// only as bytes arrive: a header that announces 8 MiB and is followed by nothing costs a few
// KiB, not 8 MiB. At most one Read() may be pending at a time.
// Writing: Send() queues a frame and returns at once; one writer coroutine writes the queue in
// order, several frames per system call. queued_bytes() is how a caller applies backpressure
// (stop reading requests while the peer does not drain its replies); bytes_sent() and
// OnWritten() tell it whether the peer is reading at all.
//
// Memory: given a MemoryBudget (protocol/memory_budget.h), the stream charges it for its
// read buffer (growth the budget refuses fails Read() with Errc::kResourceExhausted) and for
// the frames it has queued and not yet finished writing.
//
// Closing: Close() drops the connection at once. CloseWithLast() is how a server says why: it
// sends one last frame if it can go out now, then lingers a moment discarding what the peer
// still sends, so that the peer reads the last frame before it sees the connection end.
//
// Lifetime and threads: always held by std::shared_ptr (the writer and the linger keep it
// alive); every method runs on the stream's executor, which must be single-threaded (an
// io_context run by one thread, or a strand). Close() is idempotent; after it Read() fails and
// Send() drops.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "reckon/protocol/byte_stream.h"
#include "reckon/protocol/frame.h"
#include "reckon/protocol/memory_budget.h"
#include "reckon/protocol/read_buffer.h"
#include "reckon/base/error.h"

namespace reckon::api {

class FrameStream : public std::enable_shared_from_this<FrameStream> {
 public:
  // `budget` may be null (nothing counted: the client side); else it must outlive the stream.
  FrameStream(std::unique_ptr<ByteStream> stream, FrameLimits limits,
              MemoryBudget* budget = nullptr);
  // Plain TCP.
  FrameStream(boost::asio::ip::tcp::socket socket, FrameLimits limits,
              MemoryBudget* budget = nullptr);
  FrameStream(const FrameStream&) = delete;
  FrameStream& operator=(const FrameStream&) = delete;

  // The next frame. Errc::kUnavailable when the peer closed or the socket failed (the message
  // says which); Errc::kInvalidArgument for a frame that breaks the limits or the framing;
  // Errc::kResourceExhausted when the memory budget cannot hold the frame's bytes. After an
  // error the stream is out of step: close it.
  boost::asio::awaitable<Result<Frame>> Read();

  void Send(Frame frame);
  // Bytes of queued frames not yet written to the socket.
  std::size_t queued_bytes() const { return queued_bytes_; }
  // Bytes written to the socket since the stream opened.
  std::uint64_t bytes_sent() const { return bytes_sent_; }
  // `callback` runs (on the executor) each time a write moves bytes out of the queue.
  void OnWritten(std::function<void()> callback) { on_written_ = std::move(callback); }

  void Close();
  // Best effort, then closed: if no frame is half-written, `last` is written (within kLinger);
  // queued frames not yet started are dropped; the stream then reads and
  // discards what the peer still sends (at most kLingerBytes, for at most kLinger) before it
  // closes the socket, because closing a socket with unread input makes the kernel reset the
  // connection, and the peer may then lose `last` before reading it.
  void CloseWithLast(Frame last);
  static constexpr std::chrono::milliseconds kLinger{1000};
  static constexpr std::size_t kLingerBytes = 1u << 20;

  bool closed() const { return closed_; }
  const std::string& peer() const { return peer_; }
  const FrameLimits& limits() const { return limits_; }
  const char* kind() const { return stream_->kind(); }  // "tcp" or "tls"
  // The socket's error that failed the last Read() (e.g. a TLS alert the peer sent); empty
  // while none did.
  const boost::system::error_code& read_failure() const { return read_failure_; }

 private:
  boost::asio::awaitable<Result<Frame>> ReadFrame();
  boost::asio::awaitable<void> WriteLoop();
  boost::asio::awaitable<void> Linger(std::optional<Frame> last);
  // `n` more bytes of the queue reached the socket.
  void Written(std::size_t n);
  // No more frames either way; the socket stays open (Close and Linger close it).
  void StopFrames();

  // Reads until buffer_ holds at least `n` bytes, as many as the socket has.
  boost::asio::awaitable<Result<void>> Fill(std::size_t n, std::string_view where);

  std::unique_ptr<ByteStream> stream_;
  FrameLimits limits_;
  MemoryBudget* budget_;
  // Bytes received and not yet returned as frames: one read system call usually brings
  // several frames.
  ReadBuffer buffer_;
  bool reading_ = false;  // a Read() is pending (its buffer must not be freed under it)
  std::string peer_;
  std::deque<Frame> queue_;    // not yet handed to a write
  std::size_t unstarted_bytes_ = 0;  // bytes of queue_, charged to budget_
  std::size_t queued_bytes_ = 0;
  std::uint64_t bytes_sent_ = 0;
  std::function<void()> on_written_;
  bool writing_ = false;
  bool closed_ = false;
  boost::system::error_code read_failure_;
};

}  // namespace reckon::api
