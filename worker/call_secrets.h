// CallSecrets: the secrets of one tool call as its worker knows them, and the redaction of what
// the call reports with them (engine/tool_report.h; contract/secret_fields.h says what goes).
//
// The worker makes one per attempt or lookup, before the call, from the tool's contract and the
// call's full input (its secret fields and their values); the tool adds the secrets it fetched
// itself (ToolCallContext::KeepSecret: a vault's card token, a tools file's secrets). Whatever
// the call reports leaves the worker only through Redact: the report (RedactReport: output,
// provider reference, code, message, heartbeat details; a lookup's output, reference and
// message) and the heartbeat details relayed while the call runs (RemoteWorker). The worker is
// the one place that knows every secret value of the call; the engine redacts again before
// journaling with what it knows.
//
// Shared by the tool's context and the worker (a call may outlive the worker's wait for it);
// used on the worker's one executor, not thread-safe. The contract must outlive it (tools live
// in the worker's ToolRegistry).
#pragma once

#include <boost/json/value.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "reckon/contract/contract.h"
#include "reckon/engine/tool_dispatcher.h"

namespace reckon {

class CallSecrets {
 public:
  // `input`: the call's full input (null for a lookup after a restart, before replay).
  CallSecrets(const ToolContract& contract, const boost::json::value& input);

  // A secret the tool fetched itself. Empty values are ignored.
  void Add(std::string value);

  AttemptOutcome Redact(AttemptOutcome report) const;
  ReconcileOutcome Redact(ReconcileOutcome report) const;
  // Heartbeat details as they may leave the worker (canonical JSON; empty when unusable).
  std::string RedactDetails(std::string_view details_json) const;

 private:
  const ToolContract& contract_;
  std::vector<std::string> values_;  // of the input's secret fields, then the tool's own
};

}  // namespace reckon
