#include "reckon/telemetry/log_trace_sink.h"

#include "reckon/telemetry/trace_lines.h"

namespace reckon {

void LogTraceSink::OnCommitted(const RunState& run, std::span<const storage::Event> events) {
  for (const TraceLine& line : TraceLinesFor(run, events)) {
    std::string text = line.name;
    for (const auto& [key, value] : line.attributes) {
      if (key.rfind("gen_ai.", 0) == 0 || key == "workflow_id") continue;
      text += " " + key + "=" + value;
    }
    text += " workflow=" + run.ref().workflow_id;
    logger_->info(text);
  }
}

}  // namespace reckon
