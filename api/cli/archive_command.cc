#include "reckon/api/cli/archive_command.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <ostream>

#include "reckon/api/cli/age_flag.h"
#include "reckon/storage/archive/archive_file.h"
#include "reckon/storage/archive/archiver.h"
#include "reckon/storage/backend/open_backend.h"

namespace reckon::cli {
namespace {

struct ArchiveArgs {
  std::string journal;
  std::string older_than;
  std::string out;
  std::size_t max_runs = 1000;
  std::string list;
  std::string workflow;
};

std::int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Result<void> RunPass(CommandEnv& env, const ArchiveArgs& args) {
  if (args.journal.empty() || args.older_than.empty() || args.out.empty()) {
    return Err(Errc::kInvalidArgument,
               "give JOURNAL, --older-than AGE and --out FILE|DIR (or --list FILE to read an "
               "archive)");
  }
  RECKON_TRY(auto age, ParseAge(args.older_than, "--older-than"));
  if (storage::BackendOf(args.journal) == storage::BackendKind::kSqlite &&
      !std::filesystem::exists(args.journal)) {
    return Err(Errc::kNotFound, "journal '" + args.journal + "' does not exist");
  }
  RECKON_TRY(auto journal, storage::OpenJournal(args.journal));
  storage::ArchivePassOptions options;
  options.now_us = NowMicros();
  options.older_than_us = age.count();
  options.out = args.out;
  options.out_is_dir = std::filesystem::is_directory(args.out);
  options.max_runs = args.max_runs;
  RECKON_TRY(auto report, storage::ArchiveFinishedRuns(*journal, options));
  if (report.file.empty()) {
    env.out << "nothing to archive: no finished run of '" << journal->path()
            << "' was last updated more than " << args.older_than << " ago\n";
    return Ok();
  }
  for (const storage::RunRow& row : report.archived) {
    env.out << "archived " << row.ref.workflow_id << " " << row.ref.run_id << " "
            << storage::RunStatusName(row.status) << " " << (row.next_seq - 1) << " events\n";
  }
  env.out << report.archived.size() << " run(s) archived to " << report.file
          << " and deleted from the journal";
  if (report.already_deleted > 0) {
    env.out << " (" << report.already_deleted << " more were deleted already)";
  }
  env.out << "\n";
  if (report.archived.size() + report.already_deleted >= args.max_runs) {
    env.out << "more runs may be old enough: run the command again (--max-runs "
            << args.max_runs << " per pass)\n";
  }
  return Ok();
}

Result<void> RunList(CommandEnv& env, const ArchiveArgs& args) {
  RECKON_TRY(storage::ArchiveContents archive, storage::ReadArchive(args.list));
  const storage::ArchiveHeader& h = archive.header;
  env.out << "archive " << args.list << ": format version " << h.version << ", from '"
          << h.journal << "', " << archive.runs.size()
          << " run(s) last updated before " << h.updated_before_us << " us\n";
  int shown = 0;
  for (const storage::ArchivedRun& run : archive.runs) {
    const storage::RunRow& r = run.row;
    if (!args.workflow.empty() && r.ref.workflow_id != args.workflow) continue;
    ++shown;
    env.out << r.ref.workflow_id << "  " << r.ref.run_id << "  " << r.workflow_type << "  "
            << storage::RunStatusName(r.status) << "  " << run.events.size()
            << " events  updated_at_us=" << r.updated_at_us << "\n";
    if (args.workflow.empty()) continue;
    for (const storage::Event& event : run.events) {
      env.out << "  " << event.seq << "  " << storage::EventTypeName(event.body)
              << "  recorded_at_us=" << event.recorded_at_us << "\n";
    }
  }
  if (!args.workflow.empty() && shown == 0) {
    return Err(Errc::kNotFound, "no run of workflow '" + args.workflow + "' in archive '" +
                                    args.list + "'");
  }
  return Ok();
}

}  // namespace

void AddArchiveCommand(CLI::App& admin, CommandEnv& env) {
  auto args = std::make_shared<ArchiveArgs>();
  CLI::App* archive = admin.add_subcommand(
      "archive",
      "Move finished runs older than an age to a compressed archive file and delete them from "
      "the journal; or read an archive back (--list)");
  archive->add_option("journal", args->journal, "the journal (its owner: no server may hold it)");
  archive->add_option("--older-than", args->older_than,
                      "archive finished runs last updated more than AGE ago (30d, 12h, 15m, 90s)")
      ->type_name("AGE");
  archive->add_option("--out", args->out,
                      "the archive file to write, or a directory to write a new one in")
      ->type_name("FILE|DIR");
  archive->add_option("--max-runs", args->max_runs, "runs per pass")->capture_default_str();
  archive->add_option("--list", args->list, "read this archive file back instead")
      ->type_name("FILE");
  archive->add_option("--workflow", args->workflow,
                      "with --list: show the events of this workflow's runs")
      ->type_name("ID");
  archive->callback([&env, args] {
    auto result = args->list.empty() ? RunPass(env, *args) : RunList(env, *args);
    env.out.flush();
    if (!result) ReportError(env, "admin archive", result.error());
  });
}

}  // namespace reckon::cli
