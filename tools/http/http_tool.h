// HTTP tools from a tools file (tools/http/http_tools_file.h) as a worker hosts them: each
// tool's execute sends the declared request and maps the reply by the declared outcomes, and
// its reconcile sends the declared lookup.
//
// What an attempt reports:
//   the request cannot be built from the input (a missing member, a bad URL)
//                                           -> definitive "invalid_request"; nothing was sent
//   transport failure before the whole request was sent -> retryable "not_sent"
//   transport failure after it was sent     -> unknown "reply_lost" (or "deadline_exceeded")
//   a status an outcome lists               -> that outcome, with its code (or the reply's
//                                              error code, else "http_<status>"); "accepted"
//                                              -> ToolAccepted with the reply's provider_ref
//   any other status                        -> unknown
//   a success or acceptance whose reply is not JSON, or lacks the provider_ref
//                                           -> unknown "unreadable_reply" (the provider acted;
//                                              reconciliation will read the effect back)
// A success returns the reply body as its output, and the value at reply.provider_ref as the
// provider's reference. A lookup answers committed (a committed status with the reference),
// not_found (a not_found status), or still_unknown (anything else, transport failures
// included).
//
// Secrets: each call names the file's secret values to its worker (ToolCallContext::KeepSecret),
// which redacts them, with the values of the input's secret fields, from everything the call
// reports (output, provider reference, code, message; a lookup's too) before the report
// leaves it (worker/call_secrets.h). Run outside a worker, a call's report is not redacted.
//
// Thread-safety: the tools share the immutable file through a shared_ptr; calls are
// independent coroutines.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>

#include <memory>

#include "reckon/base/error.h"
#include "reckon/tools/http/http_tools_file.h"
#include "reckon/worker/tool.h"

namespace reckon::tools {

// Registers every tool of `file` in `registry` (Errc::kAlreadyExists when a name is taken,
// e.g. by another tools file).
Result<void> RegisterHttpTools(ToolRegistry& registry, std::shared_ptr<const HttpToolsFile> file);

// One attempt and one lookup of tool `spec` of `file` (which must own `spec`).
boost::asio::awaitable<AttemptOutcome> ExecuteHttpTool(std::shared_ptr<const HttpToolsFile> file,
                                                       const HttpToolSpec* spec,
                                                       boost::json::value input,
                                                       ToolCallContext context);
boost::asio::awaitable<ReconcileOutcome> ReconcileHttpTool(
    std::shared_ptr<const HttpToolsFile> file, const HttpToolSpec* spec, boost::json::value input,
    ToolCallContext context);

}  // namespace reckon::tools
