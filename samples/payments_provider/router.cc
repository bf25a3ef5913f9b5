#include "samples/payments_provider/router.h"

#include <boost/json/serialize.hpp>

#include <string_view>
#include <vector>

namespace reckon::samples::provider {
namespace {

namespace http = boost::beast::http;

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// application/x-www-form-urlencoded decoding; nullopt for a broken %-escape.
std::optional<std::string> Decode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] != '%') {
      out += text[i];
    } else {
      if (i + 2 >= text.size()) return std::nullopt;
      int high = HexValue(text[i + 1]);
      int low = HexValue(text[i + 2]);
      if (high < 0 || low < 0) return std::nullopt;
      out += static_cast<char>(high * 16 + low);
      i += 2;
    }
  }
  return out;
}

struct QueryParam {
  std::string name;
  std::string value;
};

std::optional<std::vector<QueryParam>> ParseQuery(std::string_view query) {
  std::vector<QueryParam> params;
  while (!query.empty()) {
    std::string_view pair = query.substr(0, query.find('&'));
    query.remove_prefix(std::min(query.size(), pair.size() + 1));
    if (pair.empty()) continue;
    std::size_t eq = pair.find('=');
    std::optional<std::string> name = Decode(pair.substr(0, eq));
    std::optional<std::string> value =
        Decode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1));
    if (!name || !value) return std::nullopt;
    params.push_back(QueryParam{std::move(*name), std::move(*value)});
  }
  return params;
}

RoutedReply Reply(const ServiceReply& reply, unsigned version) {
  RoutedReply routed{JsonResponse(reply.status, reply.body, version), reply.drop_connection};
  if (reply.replayed) routed.response.set("Idempotent-Replayed", "true");
  return routed;
}

RoutedReply Error(int status, std::string_view code, std::string_view message, unsigned version,
                  std::string_view field = {}) {
  return Reply(ErrorReply(status, code, message, field), version);
}

RoutedReply MethodNotAllowed(const HttpRequestMessage& request, std::string_view allow) {
  RoutedReply reply =
      Error(405, "method_not_allowed",
            std::string(request.method_string()) + " is not allowed here (allowed: " +
                std::string(allow) + ")",
            request.version());
  reply.response.set(http::field::allow, allow);
  return reply;
}

}  // namespace

HttpResponseMessage JsonResponse(int status, const boost::json::value& body, unsigned version) {
  HttpResponseMessage response(static_cast<http::status>(status), version);
  response.set(http::field::content_type, "application/json");
  response.set(http::field::server, "reckon-payments-provider");
  response.body() = boost::json::serialize(body);
  response.prepare_payload();
  return response;
}

boost::asio::awaitable<RoutedReply> Router::Handle(HttpRequestMessage request) {
  const unsigned version = request.version();
  std::string_view target = request.target();
  std::string_view path = target.substr(0, target.find('?'));
  std::string_view query =
      path.size() < target.size() ? target.substr(path.size() + 1) : std::string_view();

  constexpr std::string_view kPayments = "/payments/";
  if (path.starts_with(kPayments) && path.size() > kPayments.size() &&
      path.find('/', kPayments.size()) == std::string_view::npos) {
    if (request.method() != http::verb::get) co_return MethodNotAllowed(request, "GET");
    co_return Reply(service_.GetPayment(path.substr(kPayments.size())), version);
  }
  if (path != "/refunds") {
    co_return Error(404, "not_found", "no route for " + std::string(path), version);
  }

  if (request.method() == http::verb::post) {
    std::optional<std::string> key;
    auto header = request.find("Idempotency-Key");
    if (header != request.end()) {
      key = std::string(header->value());
      if (key->empty() || key->size() > 255) {
        co_return Error(400, "invalid_request", "Idempotency-Key must be 1..255 characters",
                        version, "Idempotency-Key");
      }
    }
    // Built outside the co_await expression: GCC 12 mishandles some temporaries inside it.
    boost::asio::awaitable<ServiceReply> create =
        service_.CreateRefund(std::move(request.body()), std::move(key));
    ServiceReply reply = co_await std::move(create);
    co_return Reply(reply, version);
  }
  if (request.method() != http::verb::get) co_return MethodNotAllowed(request, "GET, POST");

  std::optional<std::vector<QueryParam>> params = ParseQuery(query);
  if (!params) {
    co_return Error(400, "invalid_request", "malformed query string", version, "query");
  }
  for (const QueryParam& param : *params) {
    if (param.name != "idempotency_key") continue;
    if (param.value.empty()) {
      co_return Error(400, "invalid_request", "idempotency_key must not be empty", version,
                      "idempotency_key");
    }
    co_return Reply(service_.FindRefund(param.value), version);
  }
  co_return Reply(service_.ListRefunds(), version);
}

}  // namespace reckon::samples::provider
