// `reckon history WORKFLOW --export FILE`: saves a run's history as a history file
// (storage/history_file.h; docs/HISTORY_FORMAT.md) for the replayer (worker/replayer.h).
//
// From a server (the default), the events are what GetHistory returns: clear payloads, as the
// server opens them for a reader with the `read` permission; the run id and type come from
// DescribeWorkflow, asked before and after, and a new run that started in between (a restart
// of the workflow id) is refused rather than mixed in. With --journal PATH the history is read
// from a SQLite journal file directly, read-only and beside a running owner, for embedded users
// who have no server; sealed payloads then need the journal's --payload-key. A PostgreSQL
// journal is exported through its server.
#pragma once

#include <string>

#include "reckon/api/cli/command.h"
#include "reckon/api/cli/remote.h"
#include "reckon/base/error.h"
#include "reckon/storage/history_file.h"

namespace reckon::cli {

struct HistoryExportArgs {
  std::string workflow_id;
  std::string run_id;       // one run of the id (an earlier run of a chain); empty: the newest
  std::string file;         // where to write
  std::string journal;      // empty: ask the server in `remote`
  std::string payload_key;  // --journal only: the journal's payload key file
};

// Run `run_id` of the workflow id (empty: the newest), from the server.
Result<storage::HistoryFile> FetchServerHistory(const RemoteFlags& remote,
                                                const std::string& workflow_id,
                                                const std::string& run_id);
// The same, from a SQLite journal file opened read-only.
Result<storage::HistoryFile> ReadJournalHistory(const std::string& journal,
                                                const std::string& payload_key,
                                                const std::string& workflow_id,
                                                const std::string& run_id);

// Fetches (or reads) the history, writes the file and reports what it wrote on env.out (one
// JSON object with `json`).
Result<void> ExportHistory(CommandEnv& env, const RemoteFlags& remote,
                           const HistoryExportArgs& args);

}  // namespace reckon::cli
