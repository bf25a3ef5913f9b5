#include "reckon/telemetry/jsonl_trace_sink.h"

#include "reckon/telemetry/trace_lines.h"

namespace reckon {

Result<std::unique_ptr<JsonlTraceSink>> JsonlTraceSink::Open(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "a");
  if (file == nullptr) {
    return Err(Errc::kUnavailable, "cannot open trace file '" + path +
                                       "' for appending; check that the directory exists");
  }
  return std::unique_ptr<JsonlTraceSink>(new JsonlTraceSink(file));
}

JsonlTraceSink::~JsonlTraceSink() { std::fclose(file_); }

void JsonlTraceSink::OnCommitted(const RunState& run, std::span<const storage::Event> events) {
  for (const storage::Event& event : events) {
    for (const TraceLine& line : TraceLinesFor(run, std::span(&event, 1))) {
      std::string text = TraceLineJson(event, line);
      text += '\n';
      std::fwrite(text.data(), 1, text.size(), file_);
    }
  }
  std::fflush(file_);
}

}  // namespace reckon
