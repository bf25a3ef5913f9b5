// OTLP ids for Reckon's spans, derived from journal ids alone: the trace id from the workflow
// id and run id, the run span's id from the same, an operation span's id from those and the
// operation id. So the same run exported twice (after a replay, a restart, by another process)
// carries the same ids, and an operation span names its run span as parent without any state.
//
// Each id is a prefix of SHA-256 over the ids joined with a NUL separator and a domain tag, in
// lowercase hex; never all zeros (OTLP treats zero ids as invalid). Pure and thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace reckon {

// 32 hex characters (16 bytes).
std::string OtlpTraceId(std::string_view workflow_id, std::string_view run_id);
// 16 hex characters (8 bytes): the run span, root of the trace.
std::string OtlpRunSpanId(std::string_view workflow_id, std::string_view run_id);
// 16 hex characters: one operation's span, child of the run span.
std::string OtlpOperationSpanId(std::string_view workflow_id, std::string_view run_id,
                                std::string_view operation_id);

}  // namespace reckon
