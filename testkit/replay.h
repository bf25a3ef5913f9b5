// Replay of a run's history against the workflow code registered now: the check a user runs in
// CI before deploying a change, so that runs in flight do not stop as nondeterministic.
//
// ReplayHistory feeds the whole history to a fresh WorkflowInstance (worker/workflow_instance.h)
// of the run's type, exactly as a worker does when it resumes the run after a restart, and runs
// the code until it blocks or finishes. Nothing is journaled, no tool is called, no engine runs.
//
// Success: the code took the path the history records (it may issue new steps after the
// history's end: the run would go on from there). Failure:
//   Errc::kNondeterminism  the code diverged; the message names the run and the step, what the
//                          history says and what the code did, and suggests a patch;
//                          also when the history ended the run and the code did not;
//   Errc::kNotFound        no workflow of the history's type is registered;
//   Errc::kInvalidArgument the history does not begin with WorkflowStarted.
//
// Histories come from TestEnv::History (testkit/test_env.h). Saved history files
// (`reckon history --export`) are read by storage/history_file.h when that lands; this function
// takes the events they hold. Thread-safe as far as the registry is (Find only).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/storage/event.h"
#include "reckon/storage/rows.h"
#include "reckon/worker/workflow_registry.h"

namespace reckon::testkit {

// One run's history: its identity (operation ids and random draws derive from it) and events.
struct RunHistory {
  storage::RunRef run;
  std::vector<storage::Event> events;
};

Result<void> ReplayHistory(const WorkflowRegistry& workflows, const RunHistory& history);

}  // namespace reckon::testkit
