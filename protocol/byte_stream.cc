#include "reckon/protocol/byte_stream.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <vector>

namespace reckon::api {
namespace asio = boost::asio;

namespace {

constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);
// At most this many bytes per write system call (Asio's own default for async_write).
constexpr std::size_t kWriteChunk = 64 * 1024;

// async_write's completion condition that reports progress after each system call.
auto Reporting(std::function<void(std::size_t)> progress) {
  return [progress = std::move(progress)](const boost::system::error_code& ec,
                                          std::size_t done) -> std::size_t {
    if (progress) progress(done);
    return ec ? 0 : kWriteChunk;
  };
}

class TcpByteStream final : public ByteStream {
 public:
  explicit TcpByteStream(asio::ip::tcp::socket socket)
      : socket_(std::move(socket)), peer_(PeerOf(socket_)) {
    boost::system::error_code ignored;
    socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
  }

  asio::awaitable<IoResult> ReadSome(asio::mutable_buffer buffer) override {
    co_return co_await socket_.async_read_some(buffer, kNoThrow);
  }

  asio::awaitable<IoResult> Write(std::span<const asio::const_buffer> buffers,
                                  std::function<void(std::size_t)> progress) override {
    co_return co_await asio::async_write(socket_, buffers, Reporting(std::move(progress)),
                                         kNoThrow);
  }

  void Close() override {
    boost::system::error_code ignored;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }
  void Cancel() override {
    boost::system::error_code ignored;
    socket_.cancel(ignored);
  }
  void ShutdownSend() override {
    boost::system::error_code ignored;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
  }
  bool is_open() const override { return socket_.is_open(); }

  asio::any_io_executor executor() override { return socket_.get_executor(); }
  const std::string& peer() const override { return peer_; }
  const char* kind() const override { return "tcp"; }

 private:
  asio::ip::tcp::socket socket_;
  std::string peer_;
};

class TlsByteStream final : public ByteStream {
 public:
  explicit TlsByteStream(std::unique_ptr<TlsSocket> stream)
      : stream_(std::move(stream)), peer_(PeerOf(stream_->next_layer())) {
    boost::system::error_code ignored;
    stream_->next_layer().set_option(asio::ip::tcp::no_delay(true), ignored);
  }

  asio::awaitable<IoResult> ReadSome(asio::mutable_buffer buffer) override {
    auto [ec, n] = co_await stream_->async_read_some(buffer, kNoThrow);
    // A peer that closes its socket without a TLS close_notify: as eof, since frames are
    // self-delimiting and the framing reports a truncated frame itself.
    if (ec == asio::ssl::error::stream_truncated) ec = asio::error::eof;
    co_return IoResult{ec, n};
  }

  asio::awaitable<IoResult> Write(std::span<const asio::const_buffer> buffers,
                                  std::function<void(std::size_t)> progress) override {
    if (buffers.size() == 1) {
      co_return co_await asio::async_write(*stream_, buffers, Reporting(std::move(progress)),
                                           kNoThrow);
    }
    // The TLS stream encrypts and sends one buffer per write: gather a batch of frames into
    // one buffer first, so a batch costs one record and one system call, as over plain TCP.
    gather_.clear();
    for (const asio::const_buffer& b : buffers) {
      const auto* bytes = static_cast<const std::byte*>(b.data());
      gather_.insert(gather_.end(), bytes, bytes + b.size());
    }
    auto [ec, n] = co_await asio::async_write(*stream_, asio::buffer(gather_),
                                              Reporting(std::move(progress)), kNoThrow);
    if (gather_.capacity() > kKeptGatherBytes) std::vector<std::byte>().swap(gather_);
    co_return IoResult{ec, n};
  }

  void Close() override {
    boost::system::error_code ignored;
    stream_->next_layer().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    stream_->next_layer().close(ignored);
  }
  void Cancel() override {
    boost::system::error_code ignored;
    stream_->next_layer().cancel(ignored);
  }
  // Without a close_notify: frames delimit themselves (see the header).
  void ShutdownSend() override {
    boost::system::error_code ignored;
    stream_->next_layer().shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
  }
  bool is_open() const override { return stream_->next_layer().is_open(); }

  asio::any_io_executor executor() override { return stream_->get_executor(); }
  const std::string& peer() const override { return peer_; }
  const char* kind() const override { return "tls"; }

 private:
  static constexpr std::size_t kKeptGatherBytes = 256 * 1024;
  std::unique_ptr<TlsSocket> stream_;
  std::string peer_;
  std::vector<std::byte> gather_;  // Write's batch; kept between writes up to kKeptGatherBytes
};

}  // namespace

std::string PeerOf(const asio::ip::tcp::socket& socket) {
  boost::system::error_code ec;
  auto endpoint = socket.remote_endpoint(ec);
  if (ec) return "unknown peer";
  return endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
}

std::unique_ptr<ByteStream> MakeTcpByteStream(asio::ip::tcp::socket socket) {
  return std::make_unique<TcpByteStream>(std::move(socket));
}

std::unique_ptr<ByteStream> MakeTlsByteStream(std::unique_ptr<TlsSocket> stream) {
  return std::make_unique<TlsByteStream>(std::move(stream));
}

}  // namespace reckon::api
