#include "reckon/telemetry/otlp_trace_sink.h"

namespace reckon {

Result<std::unique_ptr<OtlpTraceSink>> OtlpTraceSink::Start(OtlpExporterOptions options) {
  RECKON_TRY(auto exporter, OtlpExporter::Start(std::move(options)));
  return std::unique_ptr<OtlpTraceSink>(new OtlpTraceSink(std::move(exporter)));
}

void OtlpTraceSink::OnCommitted(const RunState& run, std::span<const storage::Event> events) {
  for (OtlpSpan& span : assembler_.Add(run, events)) exporter_->Push(std::move(span));
}

void OtlpTraceSink::OnRunStopped(const RunState& run, std::string_view) {
  assembler_.Forget(run.ref());
}

}  // namespace reckon
