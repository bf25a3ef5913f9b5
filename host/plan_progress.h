// Progress lines for a plan run (`reckon plan run`, host/plan_runner.h): one line per
// journaled event a person cares about, phrased per plan step ("refund: attempt 1 started", "refund: outcome unknown (reply_lost);
// reconciling"). Derived from durable events only, so what it prints has happened.
//
// Not thread-safe; one PlanProgress per run followed.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>

#include "reckon/storage/event.h"
#include "reckon/storage/rows.h"

namespace reckon {

class PlanProgress {
 public:
  explicit PlanProgress(std::string workflow_id) : workflow_id_(std::move(workflow_id)) {}

  // The line for `event`, or nullopt for events that say nothing new to a person.
  std::optional<std::string> Line(const storage::Event& event);

  // The run ended (completed, failed or cancelled), as of the events seen.
  bool finished() const { return finished_; }
  storage::RunStatus status() const { return status_; }
  // Operations waiting for a person: approve/resolve commands, one per line.
  std::string WaitingCommands() const;
  const std::string& result_json() const { return result_json_; }
  const std::string& failure() const { return failure_; }
  // Step ids whose publish is journaled (the message is in the outbox).
  const std::set<std::string>& published() const { return published_; }

 private:
  std::string StepOf(const std::string& operation_id) const;

  std::string workflow_id_;
  std::map<std::string, std::string> steps_;        // operation id -> step id
  std::map<std::string, std::string> waiting_;      // operation id -> command for a person
  bool finished_ = false;
  storage::RunStatus status_ = storage::RunStatus::kRunning;
  std::string result_json_;
  std::string failure_;
  std::set<std::string> published_;
};

}  // namespace reckon
