#include "reckon/api/server/listen.h"

#include "reckon/protocol/client.h"

namespace reckon::api {
namespace asio = boost::asio;

Result<asio::ip::address> ListenOn(asio::ip::tcp::acceptor& acceptor, const std::string& address,
                                   std::string_view what) {
  RECKON_TRY(HostPort where, ParseHostPort(address));
  boost::system::error_code ec;
  auto ip = asio::ip::make_address(where.host, ec);
  if (ec) {
    return Err(Errc::kInvalidArgument, std::string(what) + " address '" + where.host +
                                           "' is not an IP address (use 127.0.0.1)");
  }
  asio::ip::tcp::endpoint endpoint(ip, where.port);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::ip::tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Err(Errc::kUnavailable, "cannot " + std::string(what) + " on " + address + ": " +
                                       ec.message() + " (is another process using the port?)");
  }
  return ip;
}

}  // namespace reckon::api
