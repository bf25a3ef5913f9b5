#include "reckon/storage/archive/archiver.h"

#include <filesystem>

#include "reckon/storage/archive/archive_file.h"

namespace reckon::storage {

Result<ArchivePassReport> ArchiveFinishedRuns(Journal& journal,
                                             const ArchivePassOptions& options) {
  ArchivePassReport report;
  const std::int64_t cut = options.now_us - options.older_than_us;
  RECKON_TRY(std::vector<RunRow> runs, journal.ListArchivable(cut, options.max_runs));
  if (runs.empty()) return report;

  std::string file = options.out;
  if (options.out_is_dir) {
    file = (std::filesystem::path(options.out) /
            ("reckon-archive-" + std::to_string(options.now_us) + ".jsonl.gz"))
               .string();
  }
  ArchiveHeader header;
  header.created_at_us = options.now_us;
  header.journal = journal.path();
  header.updated_before_us = cut;
  RECKON_TRY(auto writer, ArchiveWriter::Create(file, header));
  for (const RunRow& row : runs) {
    ArchivedRun run{row, {}};
    RECKON_TRY(run.events, journal.ReadEvents(row.ref));
    if (static_cast<std::int64_t>(run.events.size()) != row.next_seq - 1) {
      return Err(Errc::kCorruption, "run '" + row.ref.workflow_id + "/" + row.ref.run_id +
                                        "' has " + std::to_string(run.events.size()) +
                                        " events, but its row says " +
                                        std::to_string(row.next_seq - 1));
    }
    RECKON_TRY(writer->Add(run));
  }
  RECKON_TRY(writer->Finish());  // durable before anything leaves the journal
  report.file = file;
  for (const RunRow& row : runs) {
    auto deleted = journal.DeleteRun(row.ref, row.next_seq);
    if (!deleted && deleted.error().code() == Errc::kNotFound) {
      ++report.already_deleted;
      continue;
    }
    if (!deleted) {
      return deleted.error().WithContext("archived in '" + file + "', but deleting run '" +
                                         row.ref.workflow_id + "' failed; the next pass "
                                         "archives it again");
    }
    report.archived.push_back(row);
  }
  return report;
}

}  // namespace reckon::storage
