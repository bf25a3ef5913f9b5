// OtlpReceiver: a stand-in OTLP/HTTP collector for tests, on 127.0.0.1 (an ephemeral port).
// It records every request (target, content type, body) and answers per its mode: 200 with an
// empty ExportTraceServiceResponse ("{}"), 500, or never (it reads the request and holds the
// connection open until it is destroyed); or 200 and then it closes the connection without
// saying so (as a collector that drops idle connections does). It counts the connections it
// accepted. Runs on its own thread; every method is thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace reckon::testing {

struct OtlpRequest {
  std::string method;
  std::string target;
  std::string content_type;
  std::string body;            // empty when the receiver discards bodies
  std::size_t body_bytes = 0;  // the body's size either way
};

class OtlpReceiver {
 public:
  enum class Mode { kAccept, kFail500, kHang, kAcceptThenClose };
  // With keep_bodies false it records each request without its body (benchmarks that only
  // need a collector that accepts and discards).
  explicit OtlpReceiver(Mode mode = Mode::kAccept, bool keep_bodies = true);
  ~OtlpReceiver();
  OtlpReceiver(const OtlpReceiver&) = delete;
  OtlpReceiver& operator=(const OtlpReceiver&) = delete;

  std::string endpoint() const;  // "http://127.0.0.1:PORT"
  std::vector<OtlpRequest> requests() const;
  int connections() const;
  // Waits until `done(requests)` holds (checked after each request) or `limit` passes;
  // returns whether it held.
  bool WaitFor(const std::function<bool(const std::vector<OtlpRequest>&)>& done,
               std::chrono::milliseconds limit = std::chrono::seconds(30)) const;

 private:
  class Server;  // otlp_receiver.cc
  void Record(OtlpRequest request);

  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::vector<OtlpRequest> requests_;  // guarded by mutex_
  int connections_ = 0;                // guarded by mutex_
  const bool keep_bodies_;
  std::unique_ptr<Server> server_;
};

}  // namespace reckon::testing
