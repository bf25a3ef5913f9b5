// ByteStream: one connected, ordered, reliable byte stream as FrameStream sees it: plain TCP or
// TLS over TCP (protocol/tls.h). It hides which, so framing, limits and backpressure are
// written once.
//
// Contract: ReadSome completes with at least one byte or an error (asio::error::eof when the
// peer closed cleanly; for TLS, a peer that closes without close_notify also reads as eof).
// Write writes every byte of `buffers` or fails. At most one ReadSome and one Write may be
// pending at a time (FrameStream keeps to that). Close() is immediate and idempotent: it shuts
// the socket down, so pending operations complete with operation_aborted; it never waits for the
// peer (a TLS close_notify is not sent: frames are self-delimiting, so truncation is detected
// by the framing, and a graceful TLS shutdown could hang on a silent peer).
//
// Threads: every method runs on executor(), which must be single-threaded.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/system/error_code.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <tuple>

namespace reckon::api {

using IoResult = std::tuple<boost::system::error_code, std::size_t>;

class ByteStream {
 public:
  virtual ~ByteStream() = default;
  virtual boost::asio::awaitable<IoResult> ReadSome(boost::asio::mutable_buffer buffer) = 0;
  // `progress(bytes)`, if set, runs after each system call with the bytes written so far, so
  // a caller can tell a peer that reads slowly from one that does not read at all.
  virtual boost::asio::awaitable<IoResult> Write(
      std::span<const boost::asio::const_buffer> buffers,
      std::function<void(std::size_t)> progress) = 0;
  boost::asio::awaitable<IoResult> Write(std::span<const boost::asio::const_buffer> buffers) {
    return Write(buffers, nullptr);
  }
  virtual void Close() = 0;
  // Pending operations complete now with operation_aborted; the connection stays open.
  virtual void Cancel() = 0;
  // No more bytes from this side (TCP FIN); reading goes on.
  virtual void ShutdownSend() = 0;
  virtual bool is_open() const = 0;
  virtual boost::asio::any_io_executor executor() = 0;
  // "ADDRESS:PORT" of the peer, read once at construction ("unknown peer" if it was gone).
  virtual const std::string& peer() const = 0;
  // "tls" or "tcp", for log lines.
  virtual const char* kind() const = 0;
};

// Plain TCP. Sets TCP_NODELAY (frames are small and latency matters).
std::unique_ptr<ByteStream> MakeTcpByteStream(boost::asio::ip::tcp::socket socket);

// TLS over TCP; `stream` must have completed its handshake.
using TlsSocket = boost::asio::ssl::stream<boost::asio::ip::tcp::socket>;
std::unique_ptr<ByteStream> MakeTlsByteStream(std::unique_ptr<TlsSocket> stream);

// "ADDRESS:PORT" of a socket's peer, or "unknown peer".
std::string PeerOf(const boost::asio::ip::tcp::socket& socket);

}  // namespace reckon::api
