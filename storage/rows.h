// Rows of the tables derived from events (runs, operations, timers, approvals), and of the
// contracts table (server mode; written on its own by Journal::PutContract).
//
// Derived rows are never written on their own: an AppendRequest carries the rows that its events
// cause, and the journal writes both in one transaction (no state change without its event).
// Plain value types. Times are microseconds since the epoch. Statuses are enums; the journal
// stores them by name and refuses a name it does not know.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "reckon/base/error.h"
#include "reckon/base/side_effect.h"

namespace reckon::storage {

// kContinuedAsNew: the run ended by starting the next run of its workflow id
// (ctx.ContinueAsNew); the workflow goes on in that run.
enum class RunStatus { kRunning, kCompleted, kFailed, kCancelled, kContinuedAsNew };
// "running", "completed", "failed", "cancelled", "continued_as_new".
std::string_view RunStatusName(RunStatus status);
Result<RunStatus> ParseRunStatus(std::string_view name);
inline bool IsTerminal(RunStatus status) { return status != RunStatus::kRunning; }

enum class ApprovalState { kRequested, kGranted, kDenied };
// "requested", "granted", "denied".
std::string_view ApprovalStateName(ApprovalState state);
Result<ApprovalState> ParseApprovalState(std::string_view name);

// Identifies one run: a workflow id and the id of one execution of it.
struct RunRef {
  std::string workflow_id;
  std::string run_id;
  friend bool operator==(const RunRef&, const RunRef&) = default;
};

struct RunRow {
  std::int64_t run_pk = 0;  // the journal's internal key; stable for the life of the file
  RunRef ref;
  std::string workflow_type;
  RunStatus status = RunStatus::kRunning;
  std::int64_t next_seq = 1;
  std::int64_t created_at_us = 0;
  std::int64_t updated_at_us = 0;
};

// A page of runs for people (the console, `reckon list`): newest first, every filter optional.
// Paging is by keyset: `before_run_pk` is the run_pk of the last row of the previous page (0:
// from the newest), so a page costs the same however deep it is.
struct RunQuery {
  std::optional<RunStatus> status;
  std::string workflow_type;  // exactly; empty: any
  std::string id_prefix;      // workflow ids starting with it; empty: any
  std::string tool;           // runs with an operation of this tool; empty: any
  bool needs_human = false;   // runs with an operation awaiting approval or needing a person
  std::int64_t before_run_pk = 0;
  std::size_t limit = 50;     // at most this many rows
};

struct OperationRow {
  std::string operation_id;
  std::string step_id;
  std::string tool;
  SideEffect side_effect = SideEffect::kNonRepeatableWrite;
  std::string state;  // an operation state name (engine/operation_state.h)
  std::int64_t attempt = 0;
  std::string intent_hash;
  std::string contract_hash;
  std::string provider_ref;
  std::int64_t due_at_us = 0;  // next deadline, retry or reconciliation; 0 when none
  std::int64_t run_pk = 0;     // filled by the journal from the request's run
  std::int64_t updated_at_us = 0;
};

struct TimerRow {
  std::string timer_id;
  std::int64_t fire_at_us = 0;
  std::int64_t run_pk = 0;  // filled by the journal
};

struct ApprovalRow {
  std::string approval_id;
  std::string operation_id;
  std::string intent_hash;
  ApprovalState state = ApprovalState::kRequested;
  std::string decided_by;
  std::int64_t expires_at_us = 0;
  std::int64_t run_pk = 0;  // filled by the journal
  std::int64_t updated_at_us = 0;
};

// A message a step publishes (WorkflowContext::Publish), written by the append that journals
// the step, so it exists exactly when the step does. `message_id` is derived from the workflow
// id and the step id (engine/outbox_message.h) and unique in the journal.
struct OutboxMessage {
  std::string message_id;
  std::string step_id;
  std::string subject;
  std::string payload;  // sealed at rest when the journal has a payload codec
};

// A message as the outbox holds it, with its delivery record (storage/outbox_store.h).
struct OutboxRow {
  std::int64_t id = 0;  // insertion order
  std::string message_id;
  std::int64_t run_pk = 0;
  std::string step_id;
  std::string subject;
  std::string payload;  // opened; empty in listings that do not read payloads
  std::int64_t created_at_us = 0;
  std::int64_t published_at_us = 0;  // 0 until the broker acknowledged it
  std::int64_t stream_seq = 0;       // the stream sequence of the ack
  std::int64_t attempts = 0;
  std::int64_t next_attempt_at_us = 0;
  std::string last_error;
};

// One delivery attempt, as the dispatcher records it.
struct OutboxAttempt {
  std::string message_id;
  std::int64_t at_us = 0;
  bool acked = false;
  bool duplicate = false;             // the broker had it already (its duplicate window)
  std::int64_t stream_seq = 0;        // when acked
  std::string error;                  // when not
  std::int64_t next_attempt_at_us = 0;  // when not: the retry time
};

struct ContractRow {
  std::string name;
  std::string hash;
  std::string contract_json;
  std::int64_t registered_at_us = 0;
};

}  // namespace reckon::storage
