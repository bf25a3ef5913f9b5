// Test support for the payments-provider tests: the real binary as a child process
// (ProviderProcess) and blocking wrappers around reckon::tools::HttpRequest.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/tools/http/http_client.h"
#include "tests/support/subprocess.h"

namespace reckon::samples::provider::testing {

using tools::HttpCall;
using tools::HttpResponse;
using tools::HttpRequest;
using tools::ParseJsonBody;
using tools::HttpFailure;
using tools::HttpFailureOf;

// The payments-provider binary (RECKON_PROVIDER_PATH), started with --port 0 on `ledger`,
// after its "listening on 127.0.0.1:PORT" line was read. Its stderr (the request log) goes
// to `log_path`. Owns the process: destruction SIGKILLs it.
class ProviderProcess {
 public:
  static Result<ProviderProcess> Start(const std::string& ledger, const std::string& log_path,
                                       std::vector<std::string> flags = {});

  std::uint16_t port() const { return port_; }
  reckon::testing::Subprocess& process() { return process_; }

 private:
  ProviderProcess(reckon::testing::Subprocess process, std::uint16_t port)
      : process_(std::move(process)), port_(port) {}

  reckon::testing::Subprocess process_;
  std::uint16_t port_;
};

// Calls with a 5 s deadline.
HttpCall Get(std::uint16_t port, std::string target);
HttpCall Post(std::uint16_t port, std::string target, std::string body,
              std::string idempotency_key = {});

// Runs one request on a private io_context and returns its result.
Result<HttpResponse> Send(HttpCall call);
// Starts the calls `stagger` apart on one io_context and returns every result, in order.
std::vector<Result<HttpResponse>> SendConcurrently(std::vector<HttpCall> calls,
                                                   std::chrono::milliseconds stagger);

// A refund request body.
std::string RefundBody(const std::string& payment_id, std::int64_t amount_cents,
                       const std::string& reason = "requested_by_customer");

// The file's whole content ("" if it does not exist).
std::string ReadFile(const std::string& path);

}  // namespace reckon::samples::provider::testing
