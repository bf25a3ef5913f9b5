// EffectTrace: one structured line per committed transition, through spdlog (key=value) and,
// optionally, a JSON-lines file. Lines are derived from journal events after they are durable,
// so the trace never claims what the journal does not hold.
//
// What a line carries: workflow and operation ids, tool, step, attempt, fingerprint (the intent
// hash only), policy decision, approval reference, reconciliation result, provider reference,
// and OpenTelemetry GenAI names (gen_ai.operation.name=execute_tool, gen_ai.tool.name,
// gen_ai.tool.call.id). What it never carries: inputs, results, secrets, payment details.
//
// Not thread-safe: called from the engine's event loop.
#pragma once

#include <spdlog/logger.h>

#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "engine/run_state.h"
#include "storage/event.h"

namespace reckon {

struct TraceLine {
  std::string name;  // "operation.attempted"
  std::vector<std::pair<std::string, std::string>> attributes;
};

// The trace lines for `events` of `run` (pure; used by EffectTrace and by tests).
std::vector<TraceLine> TraceLinesFor(const RunState& run, std::span<const storage::Event> events);

// One line of the JSON-lines trace: {"ts_us":..,"seq":..,"event":"operation.attempted",...}
// (no trailing newline). `event` is the journal event the line was derived from.
std::string TraceLineJson(const storage::Event& event, const TraceLine& line);

class EffectTrace {
 public:
  // `logger` may be null (no log lines). `jsonl_path` may be empty (no file); the file is
  // appended to.
  static Result<std::unique_ptr<EffectTrace>> Create(std::shared_ptr<spdlog::logger> logger,
                                                     const std::string& jsonl_path);
  ~EffectTrace();

  void OnCommitted(const RunState& run, std::span<const storage::Event> events);

 private:
  EffectTrace(std::shared_ptr<spdlog::logger> logger, std::FILE* file)
      : logger_(std::move(logger)), file_(file) {}

  std::shared_ptr<spdlog::logger> logger_;
  std::FILE* file_;  // owned; closed by the destructor
};

}  // namespace reckon
