// ParseHttpUrl: the one URL shape the samples accept, "http://127.0.0.1:PORT" (an optional
// trailing "/" is allowed). The samples talk only to this machine, so anything else (https,
// a host name, another address, a path, a query, a missing or out-of-range port) is refused
// with Errc::kInvalidArgument and a message that names the offending part and the URL.
// Pure function; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "reckon/base/error.h"

namespace reckon::samples {

struct HttpEndpoint {
  std::string host;  // always "127.0.0.1"
  std::uint16_t port = 0;  // 1..65535

  friend bool operator==(const HttpEndpoint&, const HttpEndpoint&) = default;
};

Result<HttpEndpoint> ParseHttpUrl(std::string_view url);

}  // namespace reckon::samples
