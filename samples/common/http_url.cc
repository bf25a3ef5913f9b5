#include "samples/common/http_url.h"

#include <charconv>

namespace reckon::samples {
namespace {

Error Bad(std::string_view url, std::string_view what) {
  return Err(Errc::kInvalidArgument,
             "invalid URL '" + std::string(url) + "': " + std::string(what) +
                 " (expected http://127.0.0.1:PORT)");
}

}  // namespace

Result<HttpEndpoint> ParseHttpUrl(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  constexpr std::string_view kHost = "127.0.0.1";
  if (!url.starts_with(kScheme)) return Bad(url, "the scheme must be http://");
  std::string_view rest = url.substr(kScheme.size());
  if (rest.ends_with('/')) rest.remove_suffix(1);
  std::size_t colon = rest.find(':');
  std::string_view host = rest.substr(0, colon);
  if (host != kHost) {
    return Bad(url, "the host must be 127.0.0.1, not '" + std::string(host) + "'");
  }
  if (colon == std::string_view::npos) return Bad(url, "the port is missing");
  std::string_view port_text = rest.substr(colon + 1);
  if (port_text.empty()) return Bad(url, "the port is missing");
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size()) {
    return Bad(url, "the port '" + std::string(port_text) +
                        "' is not a number (paths and queries are not accepted)");
  }
  if (port == 0 || port > 65535) {
    return Bad(url, "the port " + std::string(port_text) + " is outside 1..65535");
  }
  return HttpEndpoint{std::string(kHost), static_cast<std::uint16_t>(port)};
}

}  // namespace reckon::samples
