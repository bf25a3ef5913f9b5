// ParseHttpUrl: splits an absolute "http://host[:port]/path?query" URL into what HttpCall
// (tools/http/http_client.h) needs. The host may be a name, an IPv4 address or an IPv6
// address in brackets; the port defaults to 80; an empty path becomes "/". Anything else is
// refused with Errc::kInvalidArgument naming the part: another scheme (https is not supported:
// put a TLS-terminating proxy in front), user info, a fragment, a bad port.
//
// PercentEncode escapes everything but RFC 3986's unreserved characters, for a value put into
// a path segment or a query parameter. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "reckon/base/error.h"

namespace reckon::tools {

struct HttpUrl {
  std::string host;  // without brackets
  std::uint16_t port = 80;
  std::string target = "/";  // path and query, starting with '/'

  friend bool operator==(const HttpUrl&, const HttpUrl&) = default;
};

Result<HttpUrl> ParseHttpUrl(std::string_view url);

std::string PercentEncode(std::string_view text);

}  // namespace reckon::tools
