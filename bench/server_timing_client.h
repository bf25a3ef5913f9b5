// ServerTimingClient: a keep-alive HTTP/1.1 client on 127.0.0.1 for the benchmarks of the HTTP
// API (console_bench, large_journal_bench). Get() returns the server's own time, read from
// the reply's Server-Timing header (`dur=MS`), beside the round trip the client saw and the
// parsed JSON body. A reply other than 200 ends the benchmark: it prints the target, the status
// and the body, and exits 1. Blocking, one request at a time; not thread-safe.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <string>

namespace reckon::bench {

struct ServerTiming {
  double server_ms = 0;  // the Server-Timing header's dur; 0 if the reply has none
  double client_ms = 0;  // request written to reply read, on this side
  boost::json::value body;
};

class ServerTimingClient {
 public:
  explicit ServerTimingClient(int port);
  ServerTiming Get(const std::string& target);

 private:
  boost::asio::io_context io_;
  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
};

// `repeat` GETs of `target`: p50 and p99 of the server's time, p50 of the round trip, and the
// size of the first reply's body as JSON.
struct ServerTimes {
  double p50_ms = 0, p99_ms = 0, round_trip_p50_ms = 0;
  std::size_t bytes = 0;
};
ServerTimes MeasureGet(ServerTimingClient& client, const std::string& target, int repeat);

}  // namespace reckon::bench
