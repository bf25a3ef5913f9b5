#include "reckon/telemetry/otlp_endpoint.h"

#include <charconv>

namespace reckon {

Result<OtlpEndpoint> ParseOtlpEndpoint(const std::string& url) {
  constexpr std::string_view kScheme = "http://";
  if (url.rfind("https://", 0) == 0) {
    return Err(Errc::kInvalidArgument,
               "--otlp-endpoint " + url + ": https is not supported; point it at a collector "
               "on http:// (a local OpenTelemetry Collector can forward over TLS)");
  }
  if (url.rfind(kScheme, 0) != 0) {
    return Err(Errc::kInvalidArgument, "--otlp-endpoint " + url +
                                           ": expected http://HOST[:PORT][/PATH], e.g. "
                                           "http://127.0.0.1:4318");
  }
  std::string rest = url.substr(kScheme.size());
  OtlpEndpoint endpoint;
  const std::size_t slash = rest.find('/');
  std::string prefix = slash == std::string::npos ? "" : rest.substr(slash);
  rest = rest.substr(0, slash);
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  endpoint.target = prefix + "/v1/traces";
  const std::size_t colon = rest.rfind(':');
  const bool bracketed = !rest.empty() && rest.front() == '[';
  if (colon != std::string::npos && (!bracketed || rest.find(']') < colon)) {
    endpoint.host = rest.substr(0, colon);
    endpoint.port = rest.substr(colon + 1);
    int port = 0;
    auto [end, ec] = std::from_chars(endpoint.port.data(),
                                     endpoint.port.data() + endpoint.port.size(), port);
    if (ec != std::errc() || end != endpoint.port.data() + endpoint.port.size() || port < 1 ||
        port > 65535) {
      return Err(Errc::kInvalidArgument,
                 "--otlp-endpoint " + url + ": the port must be a number from 1 to 65535");
    }
  } else {
    endpoint.host = rest;
    endpoint.port = "80";
  }
  if (bracketed && endpoint.host.size() >= 2 && endpoint.host.back() == ']') {
    endpoint.host = endpoint.host.substr(1, endpoint.host.size() - 2);
  }
  if (endpoint.host.empty()) {
    return Err(Errc::kInvalidArgument, "--otlp-endpoint " + url + ": no host");
  }
  return endpoint;
}

}  // namespace reckon
