// Where `reckon server` listens, and what a listener on that address may serve: one rule for
// every port the server opens (the protocol port, --listen; the console and HTTP API port,
// --http, which also serves /metrics), checked once at start for all of them
// (ServerHost::Create) and again by ListenOn, the only way the server binds a port.
//
// The rule (CheckListener), by the listener's address:
//
//   address               TLS   --insecure-dev   verdict
//   loopback (127/8, ::1) any   any              serve
//   any other             any   yes              refused: --insecure-dev takes requests
//                                                without a token, so it never leaves the machine
//   any other             no    no               --http: refused (tokens and the console's
//                                                cookies would cross the network in clear);
//                                                --listen: served, with a warning
//   any other             yes   no               serve
//
// A host that is not an IP address is refused (no name resolution: bind 127.0.0.1, ::1, or an
// interface's address). Every refusal is Errc::kInvalidArgument naming the flag and the address
// and saying what to do instead.
#pragma once

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <optional>
#include <string>
#include <string_view>

#include "reckon/base/error.h"

namespace reckon::api {

// Which listener of the server an address is for.
enum class Listener {
  kProtocol,  // --listen: the Cap'n Proto protocol (workers, the CLI)
  kHttp,      // --http: the console, the JSON HTTP API, /metrics
};

// What the rule depends on besides the address.
struct ListenerSecurity {
  bool tls = false;           // the listener serves TLS (--tls-cert)
  bool insecure_dev = false;  // requests without a token are served (--insecure-dev)
};

struct ListenerPermit {
  boost::asio::ip::address ip;
  std::uint16_t port = 0;
  bool loopback = false;
  std::optional<std::string> warning;  // to log at start, when served with a caveat
};

// The rule above for `address` ("HOST:PORT") as `which` listener.
Result<ListenerPermit> CheckListener(Listener which, const std::string& address,
                                     const ListenerSecurity& security);

// Checks `address` by CheckListener, logs its warning, then binds and listens `acceptor` on it
// (port 0 picks a free one). Errc::kInvalidArgument as CheckListener; Errc::kUnavailable naming
// the address when it cannot be bound.
Result<ListenerPermit> ListenOn(boost::asio::ip::tcp::acceptor& acceptor,
                                const std::string& address, Listener which,
                                const ListenerSecurity& security);

// "--listen" or "--http", for messages.
std::string_view ListenerFlag(Listener which);

}  // namespace reckon::api
