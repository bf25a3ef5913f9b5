// OtlpEndpoint: where OTLP/HTTP traces go, parsed from `--otlp-endpoint URL`. The URL is the
// collector's base ("http://127.0.0.1:4318", optionally with a path prefix); spans are POSTed
// to <base>/v1/traces, as OpenTelemetry's OTEL_EXPORTER_OTLP_ENDPOINT does. Only plain http:
// run a collector beside the server and let it forward over TLS. Pure and thread-safe.
#pragma once

#include <string>

#include "reckon/base/error.h"

namespace reckon {

struct OtlpEndpoint {
  std::string host;    // "127.0.0.1", "collector.local"
  std::string port;    // "4318"; "80" when the URL names none
  std::string target;  // "/v1/traces", or "<prefix>/v1/traces"
};

// kInvalidArgument, naming the URL and what is wrong: not http://, no host, a bad port.
Result<OtlpEndpoint> ParseOtlpEndpoint(const std::string& url);

}  // namespace reckon
