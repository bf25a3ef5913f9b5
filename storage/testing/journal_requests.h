// Append requests that storage tests write again and again: a one-event step of a run, and a
// journal filled with many runs whose payloads span a few hundred pages (for tests that damage
// the file). Test support only; plain functions.
#pragma once

#include <cstdint>
#include <string>

#include "reckon/base/error.h"
#include "reckon/storage/journal.h"

namespace reckon::storage {

// Run `workflow_id` (run id "r1"), one MarkerRecorded event at `seq` (1 creates the run).
AppendRequest MarkerStep(const std::string& workflow_id, std::int64_t seq);

// Appends `runs` runs "wf-0".. of 20 events (300-byte payloads) and one operation row each.
Result<void> FillRuns(Journal& journal, int runs);

}  // namespace reckon::storage
