// Worker build ids (docs/VERSIONING.md, "Worker build ids"): which worker may take a run's
// workflow task.
//
// A worker declares the build of its code (empty: unversioned) and the other builds whose runs
// it can replay. A run remembers the build of the worker that took its first workflow task
// (journaled in WorkflowTaskStarted.build_id in that activation's batch; the engine adds
// another one only when the build that runs the code changes). The rule:
//   - a run whose build is not known yet (no workflow task taken) goes to any worker, and is
//     pinned to the build of the worker that takes it;
//   - an unversioned run (pinned to "") goes to any worker;
//   - a run of build B goes to a worker of build B, or to one that lists B as compatible.
// So an unversioned worker takes unversioned runs, new runs, and runs of the builds it lists.
// A run no connected worker may take waits in its queue; it is never failed for it.
//
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <set>
#include <span>
#include <string>

#include "reckon/base/error.h"
#include "reckon/storage/event.h"

namespace reckon::api {

struct WorkerBuild {
  std::string build_id;              // empty: unversioned
  std::set<std::string> compatible;  // builds whose runs this worker can replay
};

// Whether a worker of `worker` may take a workflow task of a run pinned to `run_build`
// (nullopt: the run's build is not known yet).
bool CanServe(const WorkerBuild& worker, const std::optional<std::string>& run_build);

// The build a run's history pins it to: the build id of its first WorkflowTaskStarted; nullopt
// when the history has none (a new run, or a journal written before build ids existed).
std::optional<std::string> BuildOfHistory(std::span<const storage::Event> history);

// Checks a declared build id or compatible build: empty is allowed only for the build id
// (unversioned); at most 128 bytes of letters, digits and . _ - + : / @. Errc::kInvalidArgument
// names the field.
Result<void> CheckBuildId(const std::string& build_id, const std::string& field, bool allow_empty);

}  // namespace reckon::api
