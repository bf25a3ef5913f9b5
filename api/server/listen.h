// ListenOn: binds and listens `acceptor` on "HOST:PORT" (HOST an IP address; port 0 picks a
// free one), as the protocol port and the HTTP port both do. Returns the IP address bound.
// Errc::kInvalidArgument when HOST is not an IP address, Errc::kUnavailable naming the address
// when it cannot be bound (`what` says which listener: "listen", "--http").
#pragma once

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <string>
#include <string_view>

#include "reckon/base/error.h"

namespace reckon::api {

Result<boost::asio::ip::address> ListenOn(boost::asio::ip::tcp::acceptor& acceptor,
                                          const std::string& address, std::string_view what);

}  // namespace reckon::api
