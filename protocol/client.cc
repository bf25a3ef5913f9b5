#include "reckon/protocol/client.h"

#include "reckon/protocol/socket_deadline.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <kj/exception.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "reckon/protocol/close_reason.h"
#include "reckon/base/identifier.h"

#include <charconv>

namespace reckon::api {
namespace asio = boost::asio;

Reply::Reply(Frame frame, const FrameLimits& limits) : frame_(std::move(frame)) {
  reader_ = std::make_unique<capnp::FlatArrayMessageReader>(frame_.words(),
                                                           limits.ReaderOptions());
  root_ = reader_->getRoot<wire::Response>();
}

namespace {

// The server refused this client's certificate (IsCertificateRefusal): what is wrong, and what
// to check. Retrying may help once the server's --client-ca or the --cert file changes (the
// file is read again at each connection).
Error CertificateRefused(const std::string& address, const std::string& cert_file,
                         const std::string& alert) {
  const std::string what =
      cert_file.empty()
          ? "it requires a client certificate and none was given: pass --cert and --key (or "
            "$RECKON_CERT and $RECKON_KEY)"
          : "check that --cert " + cert_file +
                " is signed by a CA in the server's --client-ca and has not expired";
  return Err(Errc::kUnavailable, "the reckon server at " + address +
                                     " refused this client's TLS certificate (" + alert +
                                     "): " + what);
}

}  // namespace

Result<HostPort> ParseHostPort(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) {
    return Err(Errc::kInvalidArgument,
               "address '" + std::string(text) + "' is not HOST:PORT (e.g. 127.0.0.1:7233)");
  }
  unsigned port = 0;
  const char* begin = text.data() + colon + 1;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, port);
  if (ec != std::errc() || ptr != end || port > 65535) {
    return Err(Errc::kInvalidArgument, "address '" + std::string(text) +
                                           "': the port must be a number from 0 to 65535");
  }
  return HostPort{std::string(text.substr(0, colon)), static_cast<std::uint16_t>(port)};
}

Error FromWire(wire::Error::Reader error) {
  std::string code(error.getCode().cStr());
  auto parsed = ErrcFromName(code);
  // By size: a message that carries a NUL (from a server before CleanMessage) is not cut there.
  std::string message = CleanMessage(
      std::string_view(error.getMessage().cStr(), error.getMessage().size()));
  if (!parsed) return Err(Errc::kInternal, "server error '" + code + "': " + message);
  return Err(*parsed, std::move(message)).WithRedirect(error.getRedirect().cStr());
}

void ToWire(const Error& error, wire::Error::Builder out) {
  const auto code = ErrcName(error.code());
  const auto action = ErrorActionName(error.action());
  out.setCode(kj::StringPtr(code.data(), code.size()));
  out.setAction(kj::StringPtr(action.data(), action.size()));
  // Whatever bytes of a request the message quotes, it goes out valid UTF-8 and whole
  // (Cap'n Proto's Text is UTF-8 without NUL): one place for every method's errors.
  const std::string message = CleanMessage(error.message());
  out.setMessage(kj::StringPtr(message.c_str(), message.size()));
  if (!error.redirect().empty()) {
    out.setRedirect(kj::StringPtr(error.redirect().c_str(), error.redirect().size()));
  }
}

asio::awaitable<Result<std::shared_ptr<Client>>> Client::Connect(asio::any_io_executor executor,
                                                                 std::string address) {
  auto connect = Connect(std::move(executor), std::move(address), ClientOptions{});
  co_return co_await std::move(connect);
}

asio::awaitable<Result<std::shared_ptr<Client>>> Client::Connect(asio::any_io_executor executor,
                                                                 std::string address,
                                                                 ClientOptions options) {
  RECKON_CO_TRY(HostPort where, ParseHostPort(address));
  asio::ip::tcp::resolver resolver(executor);
  auto [rec, endpoints] = co_await resolver.async_resolve(
      where.host, std::to_string(where.port), asio::as_tuple(asio::use_awaitable));
  if (rec) {
    co_return Err(Errc::kUnavailable,
                  "cannot resolve server address '" + address + "': " + rec.message());
  }
  asio::ip::tcp::socket socket(executor);
  // One deadline for connecting and the TLS handshake.
  SocketDeadline deadline(executor, options.connect_timeout, /*close_on_expiry=*/true);
  deadline.Watch(socket);
  auto timed_out = [&] {
    return Err(Errc::kUnavailable, "no answer from " + address + " in " +
                                       std::to_string(options.connect_timeout.count()) +
                                       " ms (is it a reckon server, and is the host up?)");
  };
  auto [cec, endpoint] =
      co_await asio::async_connect(socket, endpoints, asio::as_tuple(asio::use_awaitable));
  if (cec) {
    deadline.Disarm();
    if (deadline.expired()) co_return timed_out();
    co_return Err(Errc::kUnavailable, "cannot reach reckon server at " + address + ": " +
                                          cec.message() + " (is `reckon server` running?)");
  }
  if (deadline.expired()) co_return timed_out();  // fired just as the connect completed
  std::unique_ptr<ByteStream> bytes;
  if (!options.tls.on()) {
    deadline.Disarm();
    bytes = MakeTcpByteStream(std::move(socket));
  } else {
    auto context = MakeClientTlsContext(options.tls);
    if (!context) {
      deadline.Disarm();
      co_return context.error();
    }
    const std::string name = options.tls.server_name.empty() ? where.host : options.tls.server_name;
    auto tls = std::make_unique<TlsSocket>(std::move(socket), *context.value());
    // OpenSSL checks the name during verification, so a mismatch reads as one
    // ("hostname mismatch", "IP address mismatch").
    X509_VERIFY_PARAM* verify = SSL_get0_param(tls->native_handle());
    boost::system::error_code not_ip;
    (void)asio::ip::make_address(name, not_ip);
    if (not_ip) {
      SSL_set_tlsext_host_name(tls->native_handle(), name.c_str());  // SNI
      X509_VERIFY_PARAM_set_hostflags(verify, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
      X509_VERIFY_PARAM_set1_host(verify, name.c_str(), 0);
    } else {
      X509_VERIFY_PARAM_set1_ip_asc(verify, name.c_str());
    }
    deadline.Watch(tls->next_layer());
    auto [hec] = co_await tls->async_handshake(asio::ssl::stream_base::client,
                                               asio::as_tuple(asio::use_awaitable));
    deadline.Disarm();
    if (deadline.expired()) co_return timed_out();
    if (hec) {
      const long verify = SSL_get_verify_result(tls->native_handle());
      if (IsCertificateRefusal(hec)) {
        co_return CertificateRefused(address, options.tls.cert_file,
                                     DescribeTlsError(hec, X509_V_OK));
      }
      std::string hint;
      if (verify != X509_V_OK) {
        hint = options.tls.ca_file.empty()
                   ? "; the system's CAs do not trust the server's certificate: pass the CA "
                     "that signed it with --ca FILE"
                   : "; is --ca " + options.tls.ca_file +
                         " the CA that signed the server's certificate, and does the "
                         "certificate name " + name + " (else --server-name)?";
      } else {
        hint = "; does the server listen with TLS (reckon server --tls-cert)? A plaintext "
               "server needs neither --tls nor --ca";
      }
      co_return Err(Errc::kUnavailable, "TLS handshake with the reckon server at " + address +
                                            " failed: " + DescribeTlsError(hec, verify) + hint);
    }
    bytes = MakeTlsByteStream(std::move(tls));
  }
  auto stream = std::make_shared<FrameStream>(std::move(bytes), options.limits);
  auto client =
      std::make_shared<Client>(std::move(stream), std::move(address), std::move(options.token));
  client->certificate_file_ = options.tls.cert_file;
  client->reading_ = true;
  asio::co_spawn(executor, client->ReadLoop(), asio::detached);
  co_return client;
}

Client::Client(std::shared_ptr<FrameStream> stream, std::string address, std::string token)
    : stream_(std::move(stream)), address_(std::move(address)), token_(std::move(token)) {}

Client::~Client() { stream_->Close(); }

asio::awaitable<Result<Reply>> Client::Call(std::unique_ptr<capnp::MallocMessageBuilder> message,
                                            std::chrono::milliseconds timeout) {
  if (close_reason_) co_return *close_reason_;
  if (stream_->closed()) {
    co_return Err(Errc::kUnavailable, "not connected to the reckon server at " + address_);
  }
  auto request = message->getRoot<wire::Request>();
  const std::uint64_t id = next_id_++;
  request.setId(id);
  request.setTimeoutMs(static_cast<std::uint32_t>(timeout.count()));
  if (!token_.empty()) request.setCredential(kj::StringPtr(token_.c_str(), token_.size()));
  Frame frame = EncodeFrame(*message);
  auto self = shared_from_this();
  auto timer = std::make_shared<asio::steady_timer>(co_await asio::this_coro::executor, timeout);
  auto initiate = [this, id, timer, &frame](auto handler) {
    pending_.emplace(id, Pending{std::move(handler), timer});
    stream_->Send(std::move(frame));
    std::weak_ptr<Client> weak = weak_from_this();
    timer->async_wait([weak, id](const boost::system::error_code& ec) {
      if (ec) return;
      if (auto client = weak.lock()) {
        client->Complete(id, Err(Errc::kDeadlineExceeded,
                                 "no reply from the reckon server at " + client->address_ +
                                     " in time; the request may still take effect, retry it "
                                     "with the same ids"));
      }
    });
  };
  auto op = asio::async_initiate<decltype(asio::use_awaitable), void(Result<Reply>)>(
      std::move(initiate), asio::use_awaitable);
  co_return co_await std::move(op);
}

void Client::Complete(std::uint64_t id, Result<Reply> result) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return;  // timed out already, or an id we never sent
  Pending pending = std::move(it->second);
  pending_.erase(it);
  pending.timer->cancel();
  std::move(pending.handler)(std::move(result));
}

void Client::FailAll(const Error& error) {
  std::map<std::uint64_t, Pending> pending;
  pending.swap(pending_);
  for (auto& [id, p] : pending) {
    p.timer->cancel();
    std::move(p.handler)(Result<Reply>(error));
  }
}

asio::awaitable<void> Client::ReadLoop() {
  auto self = shared_from_this();
  while (true) {
    auto frame = co_await stream_->Read();
    if (!frame) {
      stream_->Close();
      const bool tls = std::string_view(stream_->kind()) == "tls";
      if (!replied_ && tls && IsCertificateRefusal(stream_->read_failure())) {
        close_reason_ = CertificateRefused(
            address_, certificate_file_, DescribeTlsError(stream_->read_failure(), X509_V_OK));
        FailAll(*close_reason_);
        break;
      }
      std::string hint;
      if (!replied_ && tls) {
        hint = " (if the server verifies client certificates, --client-ca, was --cert "
               "signed by that CA?)";
      }
      FailAll(Err(Errc::kUnavailable, "lost the connection to the reckon server at " +
                                          address_ + ": " + frame.error().message() + hint));
      break;
    }
    std::uint64_t id = 0;
    std::optional<Result<Reply>> result;
    try {
      Reply reply(std::move(frame).value(), stream_->limits());
      id = reply.get().getId();
      if (id == kCloseReasonId && reply.get().getResult().isError()) {
        // The server is closing this connection and says why: every call fails with that. The
        // code stays kUnavailable, as for any lost connection (a call in flight may still take
        // effect; callers reconnect and resend); the server's code leads the message.
        const Error reason = FromWire(reply.get().getResult().getError());
        server_reason_ = reason;
        close_reason_ = Err(Errc::kUnavailable, "the reckon server at " + address_ +
                                                    " closed the connection: " +
                                                    reason.ToString());
        stream_->Close();
        FailAll(*close_reason_);
        break;
      }
      if (reply.get().getResult().isError()) {
        result.emplace(FromWire(reply.get().getResult().getError()));
      } else {
        result.emplace(std::move(reply));
      }
    } catch (const kj::Exception& e) {
      stream_->Close();
      FailAll(Err(Errc::kUnavailable, "the reckon server at " + address_ +
                                          " sent a malformed reply: " +
                                          std::string(e.getDescription().cStr())));
      break;
    }
    replied_ = true;
    Complete(id, std::move(*result));
  }
  reading_ = false;
}

void Client::Close() {
  stream_->Close();
  FailAll(Err(Errc::kUnavailable, "the connection to " + address_ + " was closed"));
}

}  // namespace reckon::api
