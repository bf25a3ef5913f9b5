// History files: one run's journaled events saved to a file, so that its replay can be checked
// later against changed workflow code (worker/replayer.h) without the journal it came from.
// `reckon history WORKFLOW --export FILE` writes them; the format is in docs/HISTORY_FORMAT.md.
//
// A history file is a JSON document, "format": "reckon-history/1", with the run's ids and type
// and its events in journal order. Each event keeps what a replay needs exactly (seq,
// recorded_at_us, and the body as the base64 of its Cap'n Proto EventPayload, the bytes
// storage/event_codec.h EncodeEventBody writes), and beside it the event as readable JSON for
// people, which reading ignores. Reading gives back the same storage::Events that were
// written. Payloads are in the clear: a history holds workflow inputs, tool results and
// signal payloads (never a tool input's secret fields, which the journal never holds either).
//
// Both directions check the same invariants: the run's ids are set, seqs run 1, 2, 3... without
// a gap, the first event is WorkflowStarted of the header's workflow type, and each event's
// "type" names its payload. Errors are kInvalidArgument and name what is wrong and where
// (which key, which seq): a wrong format version, bad base64, an undecodable payload, a seq gap.
// Stateless functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/storage/event.h"
#include "reckon/storage/journal.h"

namespace reckon::storage {

inline constexpr std::string_view kHistoryFormat = "reckon-history/1";
// Larger files are refused on read (a limit on memory, not on runs: a history this large
// should have been continued as new long before).
inline constexpr std::size_t kMaxHistoryFileBytes = std::size_t{256} << 20;

struct HistoryFile {
  std::string workflow_id;
  std::string run_id;
  std::string workflow_type;
  std::vector<Event> events;  // the run's whole history, or a prefix of it (a run in flight)
};

// kInvalidArgument naming the first broken invariant (see the top of this file).
Result<void> CheckHistory(const HistoryFile& history);

// The file's text: a JSON document, one event per line so that a diff shows events.
Result<std::string> FormatHistory(const HistoryFile& history);
// Parses and checks the text of a history file.
Result<HistoryFile> ParseHistory(std::string_view text);

// Writes `path` whole (a temporary file beside it, then a rename), so a reader never sees half a
// file. kUnavailable naming the path when it cannot be written.
Result<void> WriteHistoryFile(const std::string& path, const HistoryFile& history);
// Reads and parses `path`; every error names the file. kNotFound if it does not exist.
Result<HistoryFile> ReadHistoryFile(const std::string& path);

// The newest run of `workflow_id` as `journal` holds it now, for an embedded program that saves
// its own histories (the journal's reads and their threading rules apply: on an EmbeddedHost,
// call it on the host's thread between batches). kNotFound if the journal has no such run;
// the journal's errors otherwise (a sealed payload without its key: kFailedPrecondition).
Result<HistoryFile> ReadLatestHistory(Journal& journal, const std::string& workflow_id);
// The same for one run of a workflow id (an earlier run of a chain that continued as new).
Result<HistoryFile> ReadRunHistory(Journal& journal, const RunRef& run);

}  // namespace reckon::storage
