#include "reckon/api/server/listen.h"

#include <spdlog/spdlog.h>

#include "reckon/protocol/client.h"

namespace reckon::api {
namespace asio = boost::asio;

std::string_view ListenerFlag(Listener which) {
  return which == Listener::kHttp ? "--http" : "--listen";
}

Result<ListenerPermit> CheckListener(Listener which, const std::string& address,
                                     const ListenerSecurity& security) {
  const std::string flag(ListenerFlag(which));
  RECKON_TRY(HostPort where, ParseHostPort(address));
  boost::system::error_code ec;
  ListenerPermit permit;
  permit.ip = asio::ip::make_address(where.host, ec);
  if (ec) {
    return Err(Errc::kInvalidArgument, flag + " address '" + where.host +
                                           "' is not an IP address (use 127.0.0.1, ::1 or the "
                                           "address of one of this machine's interfaces)");
  }
  permit.port = where.port;
  const asio::ip::address& ip = permit.ip;
  permit.loopback = ip.is_loopback() ||
                    (ip.is_v6() && ip.to_v6().is_v4_mapped() &&
                     asio::ip::make_address_v4(asio::ip::v4_mapped, ip.to_v6()).is_loopback());
  if (permit.loopback) return permit;
  if (security.insecure_dev) {
    return Err(Errc::kInvalidArgument,
               "--insecure-dev serves requests without a token, so every port of the server "
               "must be on a loopback address (127.0.0.1 or ::1), and " + flag + " " + address +
                   " is not: listen on 127.0.0.1, or drop --insecure-dev and give clients "
                   "tokens (reckon auth token create)");
  }
  if (!security.tls) {
    if (which == Listener::kHttp) {
      return Err(Errc::kInvalidArgument,
                 "--http " + address + " is not a loopback address, and without TLS the "
                 "console's tokens and cookies would cross the network in clear: start the "
                 "server with --tls-cert and --tls-key, or listen on 127.0.0.1");
    }
    permit.warning = "listening on " + address + " without TLS: tokens and payloads cross the "
                     "network in clear; start the server with --tls-cert and --tls-key";
  }
  return permit;
}

Result<ListenerPermit> ListenOn(asio::ip::tcp::acceptor& acceptor, const std::string& address,
                                Listener which, const ListenerSecurity& security) {
  RECKON_TRY(ListenerPermit permit, CheckListener(which, address, security));
  if (permit.warning) spdlog::warn("{}", *permit.warning);
  asio::ip::tcp::endpoint endpoint(permit.ip, permit.port);
  boost::system::error_code ec;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::ip::tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Err(Errc::kUnavailable, "cannot listen on " + address + " (" + std::string(
                                       ListenerFlag(which)) + "): " + ec.message() +
                                       " (is another process using the port?)");
  }
  return permit;
}

}  // namespace reckon::api
