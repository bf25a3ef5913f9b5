// The replayer: checks that the current workflow code still replays saved histories
// (storage/history_file.h), so a code change can be proven safe, in CI, for the runs in flight
// before it is deployed (docs/GUIDE.md, "Replaying histories in CI").
//
// A replay does what the engine's recovery does with a run it reloads: one activation of a fresh
// WorkflowInstance (worker/workflow_instance.h) with the whole history, then the commands the
// code issued are applied by the engine's own Decider to the run's state folded from that
// history, so a replayed call is checked the same way (its tool, its contract overrides and,
// with ReplayOptions::contracts, its input's intent hash). The time the code sees as now is the
// last event's recorded_at_us, so a replay never depends on the wall clock. What the code was
// shown is the history up to its end, or, for a cancelled run, up to the cancel request (the
// code never saw the rest). Nothing runs: no tool, no journal.
//
// On top of the engine's own checks, a replay asks what recovery cannot: a run's committed
// history is everything its code had asked for when it last blocked, so the same code replayed
// over it asks for nothing new. A call, a timer or a publish the history does not have, or a
// different ending (the history completed the run; the code now waits, or fails) means runs in
// flight would take a path their history never took. Markers (now, random, the signal waits a
// run records, patch markers) are facts about the code, not effects, and are not compared.
//
// Stateless functions; thread-safe as long as the registry is not being registered into and the
// workflow code is (each replay builds its own instance).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/contract/contract_registry.h"
#include "reckon/storage/history_file.h"
#include "reckon/storage/rows.h"
#include "reckon/worker/workflow_registry.h"

namespace reckon {

struct ReplayOptions {
  // The tools' contracts (not owned; may be null). With them, every replayed call's input is
  // checked against the intent hash its history records, as recovery does; without them, a
  // changed input goes unnoticed (tools, steps and overrides are still checked).
  const ContractRegistry* contracts = nullptr;
};

// What a successful replay saw.
struct ReplayReport {
  std::string workflow_id;
  std::string run_id;
  std::string workflow_type;
  std::size_t events = 0;         // events in the history
  std::size_t events_shown = 0;   // events the code was shown (fewer for a cancelled run)
  storage::RunStatus history_status = storage::RunStatus::kRunning;  // how the history ends
  bool code_finished = false;     // the code returned, as the history says it did
  std::size_t calls_replayed = 0;  // calls the code issued again and the history answered
  bool inputs_checked = false;    // ReplayOptions::contracts was given
};

// "refund-1 (refund, run 7f3a...): 9 events, completed; 2 calls replayed".
std::string DescribeReplay(const ReplayReport& report);

// Replays `history` against the code `workflows` registers for its type. Errors:
// kNondeterminism when the code no longer matches the history (the message names the run and
// the step, and comes from the workflow context or the engine's checks when they caught it);
// kNotFound when the type is not registered; kInvalidArgument for a history that breaks the
// format's invariants or does not fold into a run.
Result<ReplayReport> ReplayHistory(const WorkflowRegistry& workflows,
                                   const storage::HistoryFile& history,
                                   const ReplayOptions& options = {});

// One file of a directory replay: its report, or why it failed (reading or replaying).
struct FileReplay {
  std::string path;
  Result<ReplayReport> result;
};

struct DirectoryReplay {
  std::vector<FileReplay> files;  // in file name order
  std::size_t failures() const;
  // One line per failed file, "<path>: <code>: <message>"; empty when none failed.
  std::string FailureText() const;
};

// Replays every "*.json" file directly in `directory` (not its subfolders), each on its own, so
// one broken file does not hide the others. Errors for the directory itself: kNotFound if it
// does not exist, kInvalidArgument if it holds no history file (a check that replays nothing
// must not pass).
Result<DirectoryReplay> ReplayHistoryDirectory(const WorkflowRegistry& workflows,
                                               const std::string& directory,
                                               const ReplayOptions& options = {});

}  // namespace reckon
