// OtlpTraceSink: the effect lifecycle as OpenTelemetry traces, exported over OTLP/HTTP JSON.
// A TraceSink (engine/trace_sink.h) that assembles spans on the engine's loop
// (telemetry/otlp_span_assembler.h: what a trace looks like, when a span is exported) and
// hands each finished span to its exporter (telemetry/otlp_exporter.h: the bounded queue, the
// thread, retries and drops). The engine pays for building the spans of its own batch and a
// short mutex-protected push; never for the network.
//
// Owns its exporter; destroying the sink flushes what it can within the shutdown grace. Not
// thread-safe except the counters, which any thread may read.
#pragma once

#include <cstdint>
#include <memory>

#include "reckon/base/error.h"
#include "reckon/engine/trace_sink.h"
#include "reckon/telemetry/otlp_exporter.h"
#include "reckon/telemetry/otlp_span_assembler.h"

namespace reckon {

class OtlpTraceSink final : public TraceSink {
 public:
  // Starts the exporter. kInvalidArgument for a bad endpoint (telemetry/otlp_endpoint.h).
  static Result<std::unique_ptr<OtlpTraceSink>> Start(OtlpExporterOptions options);

  void OnCommitted(const RunState& run, std::span<const storage::Event> events) override;
  void OnRunStopped(const RunState& run, std::string_view reason) override;

  // Spans dropped (a full queue or a collector that did not accept them) and exported.
  std::uint64_t dropped() const { return exporter_->dropped(); }
  std::uint64_t exported() const { return exporter_->exported(); }

 private:
  explicit OtlpTraceSink(std::unique_ptr<OtlpExporter> exporter)
      : exporter_(std::move(exporter)) {}

  OtlpSpanAssembler assembler_;
  std::unique_ptr<OtlpExporter> exporter_;
};

}  // namespace reckon
