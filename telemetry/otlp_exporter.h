// OtlpExporter: a bounded, batched queue of finished spans and the thread that POSTs them to
// an OTLP/HTTP collector as JSON (telemetry/otlp_json.h).
//
// Never blocks its callers: Push() takes a mutex for a deque push and, when a batch is full,
// posts one wake-up to the exporter's own io_context; the HTTP client (Boost.Beast) runs on
// the exporter's own thread. When the queue holds max_queue spans a push drops the span and
// counts it. A batch goes out when max_batch spans wait or flush_interval passed, encoded on the
// exporter's thread, over one HTTP/1.1 connection kept open from batch to batch while the
// collector keeps it (one that turns out closed is replaced at once, not counted as a retry). Each request
// has request_timeout; a failure to connect, a timeout, 429 or 5xx is retried up to
// max_retries times with doubling backoff; then, or at once on another status (the collector
// refuses the data), the batch is dropped and counted. A slow or absent collector therefore
// costs spans, never engine time.
//
// Shutdown (destructor): stops waiting, sends what is queued while the collector answers, and
// gives up after shutdown_grace: a request in flight then is cancelled and its spans counted
// as dropped. Thread-safe: Push() and the counters from any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "reckon/base/error.h"
#include "reckon/telemetry/otlp_json.h"
#include "reckon/telemetry/otlp_span.h"

namespace reckon {

struct OtlpExporterOptions {
  std::string endpoint;  // "http://127.0.0.1:4318" (telemetry/otlp_endpoint.h)
  OtlpResource resource;
  std::size_t max_queue = 2048;  // spans waiting; beyond it a push is dropped
  std::size_t max_batch = 256;   // spans per request
  std::chrono::milliseconds flush_interval{1000};
  std::chrono::milliseconds request_timeout{5000};  // connect + write + read of one request
  int max_retries = 3;                              // after the first try
  std::chrono::milliseconds first_backoff{200};     // doubled before each retry
  std::chrono::milliseconds shutdown_grace{1000};
};

class OtlpExporter {
 public:
  // Parses the endpoint and starts the thread. kInvalidArgument for a bad endpoint. Nothing
  // is sent (nor resolved) until the first batch: an absent collector is not an error here.
  static Result<std::unique_ptr<OtlpExporter>> Start(OtlpExporterOptions options);
  ~OtlpExporter();
  OtlpExporter(const OtlpExporter&) = delete;
  OtlpExporter& operator=(const OtlpExporter&) = delete;

  // Queues a finished span, or drops and counts it when the queue is full.
  void Push(OtlpSpan span);

  // Spans dropped (queue full, retries exhausted, refused, cut off at shutdown).
  std::uint64_t dropped() const;
  // Spans a collector accepted (2xx).
  std::uint64_t exported() const;

 private:
  class Worker;  // the queue and the exporter thread (otlp_exporter.cc)
  explicit OtlpExporter(std::unique_ptr<Worker> worker);

  std::unique_ptr<Worker> worker_;
};

}  // namespace reckon
