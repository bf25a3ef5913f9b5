// RunState: everything the engine knows about one run, as a fold over its journal events.
//
// The journal is the truth; a RunState is rebuilt from it after a restart by applying every
// event in order, and kept up to date afterwards by applying each new event the moment the
// engine emits it (before it is committed: a failed commit stops the engine, see
// engine/engine.h). Lifecycle inputs go through the transition table of
// engine/operation_state.h, so an event that would make an illegal transition is refused.
//
// Besides the journal's facts it holds what is kept only in memory: the full input of each
// operation (the journal has it without secrets; replay re-learns it). Not thread-safe: owned
// by the engine's event loop.
#pragma once

#include <boost/json/value.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/engine/child_workflow.h"
#include "reckon/engine/operation_id.h"
#include "reckon/engine/operation_state.h"
#include "reckon/storage/event.h"
#include "reckon/storage/rows.h"

namespace reckon {

// OperationRecord: what the run knows of one operation, folded from its events (plus the full
// input, which only memory holds). A value; copies handed out by Engine::Describe are
// snapshots.
struct OperationRecord {
  std::string operation_id;
  std::string step_id;
  std::string tool;
  SideEffect side_effect = SideEffect::kNonRepeatableWrite;
  std::string contract_hash;
  std::string intent_hash;
  std::string redacted_input_json;
  std::uint32_t max_attempts_override = 0;  // from OperationPrepared: 0 = the contract's
  bool require_approval_override = false;
  std::optional<boost::json::value> input;  // memory only; absent until the code re-issued it
  OperationState state = OperationState::kPrepared;
  std::uint32_t attempt = 0;               // the latest attempt started; 0 before the first
  std::int64_t first_attempt_at_us = 0;
  std::int64_t deadline_us = 0;            // hard deadline of the latest attempt
  std::int64_t due_at_us = 0;              // when the next retry or lookup is due; 0 if none
  std::uint32_t reconcile_rounds = 0;      // lookups started
  bool earlier_outcome_unknown = false;    // an attempt ended unknown and no not_found since
  // The latest heartbeat details journaled for an ended attempt (JSON, secrets removed);
  // the next attempt receives them. Empty: none yet.
  std::string last_heartbeat_details_json;
  // Approval: the current request or grant.
  std::string approval_id;
  std::uint32_t approval_requests = 0;     // ApprovalRequested events so far
  std::optional<storage::ApprovalState> approval_state;  // nullopt before the first request
  std::string approval_intent_hash;
  std::string approved_by;
  std::int64_t approval_expires_at_us = 0;
  // Asynchronous completion: the delivery ids of the completions journaled (CompletionReceived),
  // so that a repeated delivery is applied once.
  std::set<std::string> completion_deliveries;
  // Outcome. While awaiting_completion, provider_ref names the accepted request.
  std::string provider_ref;
  std::string result_json;
  std::string failure_code;
  std::string failure_message;
};

// An update the run accepted (ctx.OnUpdate), folded from UpdateAccepted and UpdateCompleted.
struct UpdateRecord {
  std::string name;
  std::string args_json;
  std::string sent_by;
  bool completed = false;
  std::string result_json;    // when completed without error
  std::string error_code;     // when completed with an error
  std::string error_message;
};

class RunState {
 public:
  explicit RunState(storage::RunRef ref) : ref_(std::move(ref)) {}

  // Folds one event into the state (one function per event type, RunState::Fold in
  // run_state.cc). Errors: kInternal for an event out of sequence, an illegal lifecycle
  // transition or an event about an operation the run never prepared (a corrupt or foreign
  // history); the state is then unusable.
  Result<void> Apply(const storage::Event& event);
  Result<void> ApplyAll(const std::vector<storage::Event>& events);

  const storage::RunRef& ref() const { return ref_; }
  const std::string& workflow_type() const { return workflow_type_; }
  const std::string& input_json() const { return input_json_; }
  // Who started the run (server mode: the principal); empty when embedded or before 0.2.
  const std::string& started_by() const { return started_by_; }
  const std::string& definition_hash() const { return definition_hash_; }
  // How the run derives operation and message ids (engine/operation_id.h), from its
  // WorkflowStarted.
  const IdScope& id_scope() const { return id_scope_; }
  // The run this one continues, and the run that continues it (ctx.ContinueAsNew); empty if
  // none.
  const std::string& previous_run_id() const { return previous_run_id_; }
  const std::string& next_run_id() const { return next_run_id_; }
  // A child workflow's parent run and policy (engine/child_workflow.h); empty parent id for a
  // run that is nobody's child.
  const std::string& parent_workflow_id() const { return parent_workflow_id_; }
  const std::string& parent_run_id() const { return parent_run_id_; }
  const std::string& parent_close_policy() const { return parent_close_policy_; }
  // The children this run started, by step id.
  const std::map<std::string, ChildRecord>& children() const { return children_; }
  // The run timeout from WorkflowStarted (engine/run_timeout.h); 0: none.
  std::int64_t run_deadline_us() const { return run_deadline_us_; }
  std::int64_t run_timeout_ms() const { return run_timeout_ms_; }
  storage::RunStatus status() const { return status_; }
  std::int64_t next_seq() const { return next_seq_; }
  bool started() const { return next_seq_ > 1; }
  bool terminal() const { return storage::IsTerminal(status_); }
  const std::string& result_json() const { return result_json_; }
  // How the run ended when it failed (its WorkflowFailed) or was cancelled (the reason of its
  // WorkflowCancelRequested); empty otherwise.
  const std::string& failure_code() const { return failure_code_; }
  const std::string& failure_message() const { return failure_message_; }
  const std::string& cancel_reason() const { return cancel_reason_; }
  // A cancel was requested (WorkflowCancelRequested) and the run has not closed yet: its code
  // is cleaning up (worker/workflow_cancelled.h). Stays true once the run closes.
  bool cancel_requested() const { return cancel_requested_; }
  int committed_operations() const { return committed_operations_; }
  // The build of the worker that last ran the run's code, as its last WorkflowTaskStarted
  // records it (server mode; docs/VERSIONING.md); nullopt before any.
  const std::optional<std::string>& last_build() const { return last_build_; }

  OperationRecord* FindOperation(const std::string& operation_id);
  OperationRecord* FindOperationByStep(const std::string& step_id);
  const std::map<std::string, OperationRecord>& operations() const { return operations_; }
  // Timers started and not yet fired: timer id -> fire time.
  const std::map<std::string, std::int64_t>& pending_timers() const { return pending_timers_; }
  // The signal names the code waits for and has not received, in name order: per name, the
  // waits it recorded (MarkerRecorded of kind "wait_signal", engine/command.h) minus the
  // SignalReceived events of that name and the waits that timed out (kWaitSignalEndMarker).
  // Histories written before waits were recorded have no such markers: their waits show only
  // once the code records them (at the next replay).
  std::vector<std::string> OutstandingSignalWaits() const;
  // Whether a signal with this request id was received (SignalReceived.request_id); the
  // empty id never was.
  bool SignalRequestSeen(const std::string& request_id) const {
    return !request_id.empty() && signal_request_ids_.count(request_id) != 0;
  }
  // The updates the run accepted, by update id: open ones and their answers.
  const std::map<std::string, UpdateRecord>& updates() const { return updates_; }

 private:
  struct Fold;
  Result<OperationRecord*> Operation(const std::string& operation_id, std::string_view event);
  Result<void> Advance(OperationRecord& op, const storage::EventBody& body);

  storage::RunRef ref_;
  std::string workflow_type_;
  std::string input_json_;
  std::string started_by_;
  std::string definition_hash_;
  IdScope id_scope_;
  std::string previous_run_id_, next_run_id_;
  std::string parent_workflow_id_, parent_run_id_, parent_close_policy_;
  std::map<std::string, ChildRecord> children_;  // by step id
  std::int64_t run_deadline_us_ = 0, run_timeout_ms_ = 0;
  storage::RunStatus status_ = storage::RunStatus::kRunning;
  std::string result_json_;
  std::string failure_code_, failure_message_, cancel_reason_;
  bool cancel_requested_ = false;
  std::int64_t next_seq_ = 1;
  std::optional<std::string> last_build_;
  int committed_operations_ = 0;
  std::map<std::string, OperationRecord> operations_;  // by operation id
  // Lookups by operation id, several per event on replay, go through a hash index over
  // operations_ (which stays ordered: callers iterate it in id order). Operations are never
  // removed, so the index only grows with the map. A copy of a RunState starts with an empty
  // index and rebuilds it on its first lookup, since the original's pointers name the
  // original's records; a move keeps the map's nodes, and with them the index.
  class OperationIndex {
   public:
    OperationIndex() = default;
    OperationIndex(const OperationIndex&) {}
    OperationIndex& operator=(const OperationIndex&) {
      by_id_.clear();
      return *this;
    }
    OperationIndex(OperationIndex&&) = default;
    OperationIndex& operator=(OperationIndex&&) = default;
    void Add(std::map<std::string, OperationRecord>::value_type& entry) {
      by_id_.emplace(entry.first, &entry.second);
    }
    OperationRecord* Find(std::map<std::string, OperationRecord>& operations,
                          std::string_view operation_id);

   private:
    std::unordered_map<std::string_view, OperationRecord*> by_id_;  // keys view the map's
  };
  OperationIndex operation_index_;
  std::unordered_map<std::string, std::string> step_to_operation_;  // step id -> operation id
  std::map<std::string, std::int64_t> pending_timers_;
  struct SignalTally {
    std::int64_t waits = 0;     // wait_signal markers
    std::int64_t received = 0;  // SignalReceived events
    std::int64_t timed_out = 0;  // wait_signal_end markers: waits that gave up
  };
  std::map<std::string, SignalTally> signals_;  // by signal name
  std::map<std::string, UpdateRecord> updates_;  // by update id
  std::set<std::string> signal_request_ids_;
};

}  // namespace reckon
