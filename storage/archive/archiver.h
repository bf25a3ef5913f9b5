// The archive pass: moves finished runs older than a cut from a journal into an archive file
// (storage/archive/archive_file.h), then deletes them from the journal (Journal::DeleteRun).
// `reckon admin archive` runs one pass by hand; `reckon server --retention AGE` runs passes in
// the background, on the journal's commit side (api/server/retention.h).
//
// Crash safety: the archive file is complete and fsynced (and renamed into place) before the
// first deletion commits. A crash before that leaves at most a "<file>.partial" and every run
// in the journal; a crash during the deletions leaves the runs not yet deleted both in the
// archive and in the journal. The next pass archives those again, into a new file, and
// deletes them: a run may then be in two archives, with the same events (its history cannot
// change once finished: DeleteRun checks its next_seq), and readers take either copy.
//
// Threading: uses the Journal it is given, so it runs where that journal may be used (its
// owner's thread, or the GroupCommitter's strand).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/storage/journal.h"

namespace reckon::storage {

struct ArchivePassOptions {
  std::int64_t now_us = 0;
  std::int64_t older_than_us = 0;  // runs last updated before now_us - older_than_us
  // The archive to write: a file, or with `out_is_dir` a directory in which the pass names
  // the file "reckon-archive-<now_us>.jsonl.gz".
  std::string out;
  bool out_is_dir = false;
  std::size_t max_runs = 1000;  // per pass (and so per file); the rest wait for the next pass
};

struct ArchivePassReport {
  std::string file;               // empty when there was nothing to archive
  std::vector<RunRow> archived;   // written to `file` and deleted from the journal
  int already_deleted = 0;        // in the file, but gone from the journal already
};

// One pass. Errors: the journal's, the file's (nothing deleted then), or the first deletion
// that failed (the runs before it are deleted; the rest stay in the journal and in the file).
Result<ArchivePassReport> ArchiveFinishedRuns(Journal& journal, const ArchivePassOptions& options);

}  // namespace reckon::storage
