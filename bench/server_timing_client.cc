#include "bench/server_timing_client.h"

#include <boost/asio/ip/address.hpp>
#include <boost/beast/http.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <vector>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace reckon::bench {

namespace asio = boost::asio;
namespace http = boost::beast::http;

ServerTimingClient::ServerTimingClient(int port) : stream_(io_) {
  stream_.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"),
                                          static_cast<unsigned short>(port)));
}

ServerTiming ServerTimingClient::Get(const std::string& target) {
  http::request<http::string_body> request{http::verb::get, target, 11};
  request.set(http::field::host, "127.0.0.1");
  const auto start = std::chrono::steady_clock::now();
  http::write(stream_, request);
  http::response<http::string_body> response;
  http::read(stream_, buffer_, response);
  ServerTiming t;
  t.client_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const std::string timing(response["Server-Timing"]);
  const auto at = timing.find("dur=");
  if (at != std::string::npos) t.server_ms = std::stod(timing.substr(at + 4));
  if (response.result_int() != 200) {
    std::fprintf(stderr, "GET %s: %u %s\n", target.c_str(), response.result_int(),
                 response.body().c_str());
    std::exit(1);
  }
  t.body = boost::json::parse(response.body());
  return t;
}

namespace {

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * v.size()))];
}

}  // namespace

ServerTimes MeasureGet(ServerTimingClient& client, const std::string& target, int repeat) {
  std::vector<double> server, round_trip;
  ServerTimes times;
  for (int i = 0; i < repeat; ++i) {
    ServerTiming t = client.Get(target);
    server.push_back(t.server_ms);
    round_trip.push_back(t.client_ms);
    if (i == 0) times.bytes = boost::json::serialize(t.body).size();
  }
  times.p50_ms = Percentile(server, 0.5);
  times.p99_ms = Percentile(server, 0.99);
  times.round_trip_p50_ms = Percentile(round_trip, 0.5);
  return times;
}

}  // namespace reckon::bench
