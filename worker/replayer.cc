#include "reckon/worker/replayer.h"

#include <algorithm>
#include <filesystem>
#include <span>
#include <system_error>

#include "reckon/engine/clock.h"
#include "reckon/engine/decider.h"
#include "reckon/engine/outbox_message.h"
#include "reckon/engine/run_state.h"
#include "reckon/worker/workflow_instance.h"

namespace reckon {
namespace {

using storage::Event;
using storage::HistoryFile;
using storage::RunStatus;

// How the history ends, and where: the run's status and the seq of its ending event (0 while
// running).
struct Ending {
  RunStatus status = RunStatus::kRunning;
  std::int64_t seq = 0;
  std::string detail;  // the failure code, for a failed run; the next input, for a continued one
  // A cancel the code never saw (histories written before cancellation reached the code): the
  // request, its rejections and the cancellation were one batch, and `seq` is the request's.
  bool cancel_unseen = false;
};

Ending EndingOf(const HistoryFile& history) {
  for (const Event& event : history.events) {
    if (std::holds_alternative<storage::WorkflowCompleted>(event.body)) {
      return {RunStatus::kCompleted, event.seq, ""};
    }
    if (const auto* failed = std::get_if<storage::WorkflowFailed>(&event.body)) {
      return {RunStatus::kFailed, event.seq, failed->code};
    }
    if (const auto* request = std::get_if<storage::WorkflowCancelRequested>(&event.body);
        request && !request->to_code) {
      return {RunStatus::kCancelled, event.seq, "", true};
    }
    if (std::holds_alternative<storage::WorkflowCancelled>(event.body)) {
      return {RunStatus::kCancelled, event.seq, ""};  // the code ended the run, told of a cancel
    }
    if (const auto* next = std::get_if<storage::WorkflowContinuedAsNew>(&event.body)) {
      return {RunStatus::kContinuedAsNew, event.seq, next->input_json};
    }
  }
  return {};
}

// The events the code saw: all of them, except an older history's cancel batch, which never
// reached the code: replay stops before it.
std::span<const Event> EventsShown(const HistoryFile& history, const Ending& ending) {
  std::span<const Event> all(history.events);
  if (!ending.cancel_unseen) return all;
  return all.first(static_cast<std::size_t>(ending.seq - 1));
}

std::string RunText(const HistoryFile& history) {
  return "run '" + history.workflow_id + "' (run id " + history.run_id + ")";
}

// The run's state when the code issued its last commands: everything shown except an ending
// the code itself caused (WorkflowCompleted, WorkflowFailed, WorkflowContinuedAsNew, and the
// WorkflowCancelled of a cancel the code was told of), as
// recovery would hold it.
Result<void> Fold(RunState& state, std::span<const Event> shown, const Ending& ending,
                  const HistoryFile& history) {
  for (const Event& event : shown) {
    if (event.seq == ending.seq) break;
    if (auto applied = state.Apply(event); !applied) {
      return Err(Errc::kInvalidArgument,
                 RunText(history) + ": its history does not fold into a run at seq " +
                     std::to_string(event.seq) + " (" + applied.error().message() +
                     "); export it again from the journal");
    }
  }
  return Ok();
}

Error Diverged(const HistoryFile& history, std::int64_t last_seq, const std::string& what) {
  return Err(Errc::kNondeterminism,
             RunText(history) + ": replayed to the end of its history (seq " +
                 std::to_string(last_seq) + "), the code " + what +
                 "; the workflow code changed incompatibly: a run in flight at this point would "
                 "take a path its history never took (keep the old path for such runs behind "
                 "ctx.Patched)");
}

// What the code asked for beyond the history: nothing, for a history its code wrote.
Result<void> CheckNothingNew(const HistoryFile& history, std::int64_t last_seq,
                             const std::vector<Command>& commands) {
  for (const Command& command : commands) {
    if (const auto* call = std::get_if<ScheduleCall>(&command); call && !call->replayed) {
      return Diverged(history, last_seq,
                      "now calls '" + call->tool + "' at step '" + call->step_id +
                          "', which the history does not have");
    }
    if (const auto* timer = std::get_if<StartTimer>(&command)) {
      return Diverged(history, last_seq,
                      "now starts timer '" + timer->timer_id +
                          "', which the history does not have");
    }
    if (const auto* update = std::get_if<CompleteUpdate>(&command)) {
      return Diverged(history, last_seq,
                      "now answers update '" + update->update_id +
                          "', which the history does not answer");
    }
    if (const auto* marker = std::get_if<RecordMarker>(&command);
        marker && marker->kind == kPublishMarker) {
      return Diverged(history, last_seq,
                      "now publishes at step '" + marker->step_id +
                          "', which the history does not have");
    }
  }
  return Ok();
}

// What blocked code waits for, as far as its commands tell: a signal wait it just recorded
// names the signal; anything else was asked for earlier and is still unanswered.
std::string WaitText(const std::vector<Command>& commands) {
  for (auto it = commands.rbegin(); it != commands.rend(); ++it) {
    if (const auto* marker = std::get_if<RecordMarker>(&*it);
        marker && marker->kind == kWaitSignalMarker) {
      return "signal " + marker->value_json + " (step '" + marker->step_id +
             "'), which the history never gave it";
    }
  }
  return "something the history never gave it";
}

// The code's ending against the history's.
Result<void> CheckEnding(const HistoryFile& history, std::int64_t last_seq, const Ending& ending,
                         const std::vector<Command>& commands) {
  const CompleteWorkflow* completed = nullptr;
  const FailWorkflow* failed = nullptr;
  const ContinueAsNew* continued = nullptr;
  for (const Command& command : commands) {
    if (!completed) completed = std::get_if<CompleteWorkflow>(&command);
    if (!failed) failed = std::get_if<FailWorkflow>(&command);
    if (!continued) continued = std::get_if<ContinueAsNew>(&command);
  }
  const bool finished = completed != nullptr || failed != nullptr || continued != nullptr;
  const std::string now = completed ? "now completes the run"
                          : failed  ? "now fails the run (" + failed->code + ": " +
                                         failed->message + ")"
                          : continued ? "now continues as new with " + continued->input_json
                                      : "now waits for " + WaitText(commands);
  switch (ending.status) {
    case RunStatus::kCompleted:
      if (completed) return Ok();
      return Diverged(history, last_seq,
                      now + ", where the history completed it at seq " +
                          std::to_string(ending.seq));
    case RunStatus::kFailed:
      if (failed) return Ok();
      return Diverged(history, last_seq,
                      now + ", where the history failed it (" + ending.detail + ") at seq " +
                          std::to_string(ending.seq));
    case RunStatus::kContinuedAsNew:
      if (continued && continued->input_json == ending.detail) return Ok();
      return Diverged(history, last_seq,
                      now + ", where the history continued as new with " + ending.detail +
                          " at seq " + std::to_string(ending.seq));
    case RunStatus::kCancelled:
      if (!ending.cancel_unseen) {
        if (failed && failed->code == kWorkflowCancelledCode) return Ok();
        return Diverged(history, last_seq,
                        now + ", where the history has it end cancelled at seq " +
                            std::to_string(ending.seq));
      }
      [[fallthrough]];
    case RunStatus::kRunning:
      if (!finished) return Ok();
      return Diverged(history, last_seq,
                      now + ", where the history has it still " +
                          (ending.status == RunStatus::kRunning ? "running"
                                                                : "waiting when it was cancelled"));
  }
  return Ok();
}

}  // namespace

std::string DescribeReplay(const ReplayReport& report) {
  std::string text = report.workflow_id + " (" + report.workflow_type + ", run " + report.run_id +
                     "): " + std::to_string(report.events) + " events, " +
                     std::string(storage::RunStatusName(report.history_status)) + "; " +
                     std::to_string(report.calls_replayed) + " calls replayed";
  if (!report.inputs_checked) text += " (inputs not checked: no contracts)";
  return text;
}

Result<ReplayReport> ReplayHistory(const WorkflowRegistry& workflows, const HistoryFile& history,
                                   const ReplayOptions& options) {
  RECKON_TRY(storage::CheckHistory(history));
  const WorkflowFunction* function = workflows.Find(history.workflow_type);
  if (function == nullptr) {
    return Err(Errc::kNotFound, RunText(history) + " is of workflow type '" +
                                    history.workflow_type +
                                    "', which the registry replayed against does not have; "
                                    "register the workflows as the workers do");
  }
  const Ending ending = EndingOf(history);
  const std::span<const Event> shown = EventsShown(history, ending);
  RunState state(storage::RunRef{history.workflow_id, history.run_id});
  RECKON_TRY(Fold(state, shown, ending, history));

  const std::int64_t now_us = shown.back().recorded_at_us;
  WorkflowInstance instance(*function, history.workflow_id, history.run_id);
  RECKON_TRY(std::vector<Command> commands, instance.Activate(shown, now_us));
  // The engine's checks of replayed calls, on a copy: the commands are compared below.
  const ContractRegistry no_contracts;
  Decider decider(state, options.contracts ? *options.contracts : no_contracts,
                  FromMicros(now_us));
  RECKON_TRY(decider.ApplyCommands(commands));
  const std::int64_t last_seq = shown.back().seq;
  RECKON_TRY(CheckNothingNew(history, last_seq, commands));
  RECKON_TRY(CheckEnding(history, last_seq, ending, commands));

  ReplayReport report{history.workflow_id, history.run_id, history.workflow_type};
  report.events = history.events.size();
  report.events_shown = shown.size();
  report.history_status = ending.status;
  report.code_finished = instance.finished();
  report.calls_replayed = static_cast<std::size_t>(std::count_if(
      commands.begin(), commands.end(), [](const Command& command) {
        const auto* call = std::get_if<ScheduleCall>(&command);
        return call != nullptr && call->replayed;
      }));
  report.inputs_checked = options.contracts != nullptr;
  return report;
}

std::size_t DirectoryReplay::failures() const {
  return static_cast<std::size_t>(std::count_if(
      files.begin(), files.end(), [](const FileReplay& file) { return !file.result; }));
}

std::string DirectoryReplay::FailureText() const {
  std::string text;
  for (const FileReplay& file : files) {
    if (!file.result) text += file.path + ": " + file.result.error().ToString() + "\n";
  }
  return text;
}

Result<DirectoryReplay> ReplayHistoryDirectory(const WorkflowRegistry& workflows,
                                               const std::string& directory,
                                               const ReplayOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(directory, ec)) {
    return Err(Errc::kNotFound, "no directory of history files at '" + directory + "'");
  }
  std::vector<std::string> paths;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") {
      paths.push_back(entry.path().string());
    }
  }
  if (ec) {
    return Err(Errc::kUnavailable, "cannot list '" + directory + "': " + ec.message());
  }
  if (paths.empty()) {
    return Err(Errc::kInvalidArgument,
               "'" + directory + "' holds no history file (*.json); export some with "
               "`reckon history WORKFLOW --export FILE`");
  }
  std::sort(paths.begin(), paths.end());
  DirectoryReplay replay;
  for (std::string& path : paths) {
    auto history = storage::ReadHistoryFile(path);
    Result<ReplayReport> result = history ? ReplayHistory(workflows, history.value(), options)
                                          : Result<ReplayReport>(history.error());
    replay.files.push_back(FileReplay{std::move(path), std::move(result)});
  }
  return replay;
}

}  // namespace reckon
