// JsonlTraceSink: the effect trace as a JSON-lines file, one object per trace line
// (telemetry/trace_lines.h: TraceLineJson), appended and flushed after every committed batch.
// The file is for tools (jq, a log shipper); it carries the OpenTelemetry GenAI names.
//
// Durability: lines are written after the journal commit and flushed to the OS, not fsynced;
// a crash can lose the last lines, never add one the journal lacks. The journal is the record.
// Not thread-safe: called on the engine's executor. Owns its file.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include "reckon/base/error.h"
#include "reckon/engine/trace_sink.h"

namespace reckon {

class JsonlTraceSink final : public TraceSink {
 public:
  // Opens `path` for appending. Fails (kUnavailable) when it cannot, naming the path.
  static Result<std::unique_ptr<JsonlTraceSink>> Open(const std::string& path);
  ~JsonlTraceSink() override;
  JsonlTraceSink(const JsonlTraceSink&) = delete;
  JsonlTraceSink& operator=(const JsonlTraceSink&) = delete;

  void OnCommitted(const RunState& run, std::span<const storage::Event> events) override;

 private:
  explicit JsonlTraceSink(std::FILE* file) : file_(file) {}
  std::FILE* file_;  // owned; closed by the destructor
};

}  // namespace reckon
