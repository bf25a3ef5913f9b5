// LogTraceSink: the effect trace as log lines through spdlog, one `name key=value ...` line per
// trace line (telemetry/trace_lines.h), short enough to read in a terminal. The OpenTelemetry
// attribute names are left to the JSON-lines sink.
//
// Not thread-safe: called on the engine's executor (engine/trace_sink.h). Shares the logger.
#pragma once

#include <spdlog/logger.h>

#include <memory>

#include "reckon/engine/trace_sink.h"

namespace reckon {

class LogTraceSink final : public TraceSink {
 public:
  explicit LogTraceSink(std::shared_ptr<spdlog::logger> logger) : logger_(std::move(logger)) {}
  void OnCommitted(const RunState& run, std::span<const storage::Event> events) override;

 private:
  std::shared_ptr<spdlog::logger> logger_;  // never null
};

}  // namespace reckon
