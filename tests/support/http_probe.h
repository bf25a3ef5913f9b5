// Probes of a server's ports for tests and benchmarks, from the two sides an attacker test needs:
// HttpOnce, one blocking HTTP/1.1 request on a fresh connection (plain, or HTTPS trusting a CA
// and optionally presenting a client certificate), as a legitimate client; RawSocket, a bare TCP
// connection that sends what it is told and nothing else, as an attacker. Both may connect from
// any loopback address (127.0.0.2, ...), so that one machine plays several peers.
//
// Blocking; every call is bounded by a timeout. Not thread-safe per object.
#pragma once

#include <boost/beast/http/verb.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace reckon::testing {

struct HttpTlsFiles {
  std::string ca;    // trust these CAs (PEM)
  std::string cert;  // a client certificate to present (PEM); empty: none
  std::string key;
};

struct HttpCall {
  boost::beast::http::verb verb = boost::beast::http::verb::get;
  std::string target = "/";
  std::string body;  // sent as application/json when not empty
  std::vector<std::pair<std::string, std::string>> headers;
  std::string source = "127.0.0.1";  // the client's own address
  std::optional<HttpTlsFiles> tls;   // HTTPS when set
  std::chrono::milliseconds timeout{10000};  // for the whole call
};

struct HttpResult {
  unsigned status = 0;  // 0 when no reply came
  std::string body;
  std::string error;  // why no reply came (connect, handshake, read), else ""
  double ms = 0;      // connect to reply read
};

// One request to 127.0.0.1:port on a fresh connection, closed after the reply.
HttpResult HttpOnce(std::uint16_t port, const HttpCall& call);

// A TCP connection from `source` to 127.0.0.1:port that sends only what it is given.
class RawSocket {
 public:
  RawSocket(const std::string& source, std::uint16_t port);
  ~RawSocket();
  RawSocket(RawSocket&& other) noexcept;
  RawSocket& operator=(RawSocket&& other) noexcept;
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;

  bool connected() const { return connected_; }
  int fd() const { return fd_; }  // for poll(); -1 once closed
  // Sends all of `bytes` without blocking for long; false if the connection is gone.
  bool Send(std::string_view bytes);
  // Whether the server has closed the connection (reads and drops what it sent), without
  // waiting.
  bool Ended();
  // Waits up to `timeout` for the server to close it; true if it did.
  bool WaitEnded(std::chrono::milliseconds timeout);
  void Close();

 private:
  int fd_ = -1;
  bool connected_ = false;
  bool ended_ = false;
};

// The first bytes of a TLS 1.2 ClientHello record header and a part of its body: a handshake
// that has begun and will never finish (what an idle TLS peer sends before it goes quiet).
std::string_view PartialClientHello();

}  // namespace reckon::testing
