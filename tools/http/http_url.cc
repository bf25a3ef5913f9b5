#include "reckon/tools/http/http_url.h"

#include <charconv>

namespace reckon::tools {
namespace {

Error Bad(std::string_view url, std::string_view what) {
  return Err(Errc::kInvalidArgument, "URL '" + std::string(url) + "': " + std::string(what));
}

}  // namespace

Result<HttpUrl> ParseHttpUrl(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  if (url.substr(0, 8) == "https://") {
    return Bad(url, "https is not supported; use http:// (behind a TLS-terminating proxy)");
  }
  if (url.substr(0, kScheme.size()) != kScheme) return Bad(url, "must start with http://");
  std::string_view rest = url.substr(kScheme.size());
  if (rest.find('#') != std::string_view::npos) return Bad(url, "a fragment (#) is not allowed");
  const std::size_t path_at = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, path_at);
  HttpUrl parsed;
  if (path_at != std::string_view::npos) {
    std::string_view path = rest.substr(path_at);
    parsed.target = path.front() == '?' ? "/" + std::string(path) : std::string(path);
  }
  if (authority.find('@') != std::string_view::npos) {
    return Bad(url, "user info (user@host) is not allowed; send credentials in a header");
  }
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return Bad(url, "an IPv6 address lacks its ']'");
    parsed.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return Bad(url, "unexpected text after the IPv6 address");
      port_text = after.substr(1);
      if (port_text.empty()) return Bad(url, "the port is empty");
    }
  } else {
    const std::size_t colon = authority.rfind(':');
    parsed.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      if (port_text.empty()) return Bad(url, "the port is empty");
    }
  }
  if (parsed.host.empty()) return Bad(url, "the host is empty");
  if (!port_text.empty()) {
    unsigned port = 0;
    auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 ||
        port > 65535) {
      return Bad(url, "the port must be a number in 1..65535");
    }
    parsed.port = static_cast<std::uint16_t>(port);
  }
  return parsed;
}

std::string PercentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
                            c == '~';
    if (unreserved) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
  }
  return out;
}

}  // namespace reckon::tools
