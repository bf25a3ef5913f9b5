#include "reckon/api/server/http/http_parse.h"

#include <boost/json/parse.hpp>

#include <charconv>
#include <utility>

namespace reckon::api {
namespace {

namespace http = boost::beast::http;

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

void LimitRequestParser(HttpRequestParser& parser, std::size_t max_header_bytes,
                        std::size_t max_body_bytes) {
  parser.header_limit(static_cast<std::uint32_t>(max_header_bytes));
  parser.body_limit(max_body_bytes);
}

HttpRequest ToHttpRequest(http::request<http::string_body>& message, std::string peer) {
  HttpRequest call;
  call.method = message.method();
  call.target = std::string(message.target());
  call.authorization = std::string(message[http::field::authorization]);
  call.cookie = std::string(message[http::field::cookie]);
  call.csrf = std::string(message["X-CSRF-Token"]);
  call.content_type = std::string(message[http::field::content_type]);
  call.body = std::move(message.body());
  call.peer = std::move(peer);
  return call;
}

HttpTarget SplitTarget(std::string_view target) {
  const std::size_t mark = target.find('?');
  if (mark == std::string_view::npos) return {std::string(target), ""};
  return {std::string(target.substr(0, mark)), std::string(target.substr(mark + 1))};
}

std::string PercentDecode(std::string_view text, bool query) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && HexDigit(text[i + 1]) >= 0 &&
        HexDigit(text[i + 2]) >= 0) {
      out.push_back(static_cast<char>(HexDigit(text[i + 1]) * 16 + HexDigit(text[i + 2])));
      i += 2;
    } else if (query && text[i] == '+') {
      out.push_back(' ');
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

std::map<std::string, std::string> ParseQuery(std::string_view query) {
  std::map<std::string, std::string> out;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    const std::size_t eq = pair.find('=');
    if (!pair.empty()) {
      out[PercentDecode(pair.substr(0, eq), true)] =
          eq == std::string_view::npos ? "" : PercentDecode(pair.substr(eq + 1), true);
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return out;
}

std::vector<std::string> PathSegments(std::string_view path) {
  std::vector<std::string> out;
  while (!path.empty()) {
    if (path.front() == '/') {
      path.remove_prefix(1);
      continue;
    }
    const std::size_t slash = path.find('/');
    out.push_back(PercentDecode(path.substr(0, slash), false));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash);
  }
  return out;
}

std::string CookieValue(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    const std::size_t semi = header.find(';');
    std::string_view pair = header.substr(0, semi);
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    if (pair.size() > name.size() && pair.substr(0, name.size()) == name &&
        pair[name.size()] == '=') {
      return std::string(pair.substr(name.size() + 1));
    }
    if (semi == std::string_view::npos) break;
    header.remove_prefix(semi + 1);
  }
  return "";
}

Result<boost::json::object> BodyObject(const std::string& body) {
  if (body.empty()) return boost::json::object();
  boost::system::error_code ec;
  boost::json::value value = boost::json::parse(body, ec);
  if (ec) return Err(Errc::kInvalidArgument, "the request body is not JSON: " + ec.message());
  if (!value.is_object()) {
    return Err(Errc::kInvalidArgument, "the request body must be a JSON object");
  }
  return std::move(value.as_object());
}

std::uint32_t NumberParam(const std::map<std::string, std::string>& query, const std::string& name,
                          std::uint32_t fallback, std::uint32_t max, Result<void>& status) {
  auto it = query.find(name);
  if (it == query.end() || it->second.empty()) return fallback;
  std::uint32_t value = 0;
  const auto [end, ec] =
      std::from_chars(it->second.data(), it->second.data() + it->second.size(), value);
  if (ec != std::errc() || end != it->second.data() + it->second.size() || value > max) {
    status = Err(Errc::kInvalidArgument, "query parameter " + name + " must be a number from 0 to " +
                                             std::to_string(max));
  }
  return value;
}

}  // namespace reckon::api
