#include "reckon/api/cli/admin_commands.h"

#include <boost/json.hpp>

#include <memory>
#include <ostream>
#include <string>
#include <utility>

#include "reckon/api/cli/archive_command.h"
#include "reckon/storage/backend/open_backend.h"
#include "reckon/storage/sqlite/journal_rewrite.h"

namespace reckon::cli {
namespace {

namespace json = boost::json;

struct CheckArgs {
  std::string journal;
  bool json = false;
};

void PrintText(std::ostream& out, const storage::JournalCheckReport& r) {
  out << "journal:        " << r.path << "\n"
      << "schema version: " << r.schema_version << "\n"
      << "runs:           " << r.runs << "\n"
      << "events:         " << r.events << "\n"
      << "operations:     " << r.operations << "\n"
      << "owner:          " << (r.owner.empty() ? "none" : r.owner) << "\n"
      << "page checksums: " << (r.page_checksums.empty() ? "unknown" : r.page_checksums);
  if (r.pages_verified > 0 || r.wal_frames_verified > 0) {
    out << " (verified " << r.pages_verified << " pages and " << r.wal_frames_verified
        << " -wal frames)";
  }
  out << "\n"
      << "integrity:      " << (r.ok() ? "ok" : "DAMAGED") << "\n";
  for (const std::string& problem : r.problems) out << "  " << problem << "\n";
}

void PrintJson(std::ostream& out, const storage::JournalCheckReport& r) {
  json::array problems;
  for (const std::string& problem : r.problems) problems.emplace_back(problem);
  json::array warnings;
  for (const std::string& warning : r.warnings) warnings.emplace_back(warning);
  json::object object{{"journal", r.path},
                      {"schema_version", r.schema_version},
                      {"runs", r.runs},
                      {"events", r.events},
                      {"operations", r.operations},
                      {"owner", r.owner},
                      {"page_checksums", r.page_checksums},
                      {"pages_verified", r.pages_verified},
                      {"wal_frames_verified", r.wal_frames_verified},
                      {"ok", r.ok()},
                      {"problems", std::move(problems)},
                      {"warnings", std::move(warnings)}};
  out << json::serialize(object) << "\n";
}

Result<void> RunCheck(CommandEnv& env, const CheckArgs& args) {
  RECKON_TRY(storage::JournalCheckReport report, storage::CheckJournalAt(args.journal));
  if (args.json) {
    PrintJson(env.out, report);
  } else {
    PrintText(env.out, report);
  }
  env.out.flush();
  for (const std::string& warning : report.warnings) {
    env.err << "reckon admin check: warning: " << warning << "\n";
  }
  if (!report.ok()) {
    env.err << "reckon admin check: journal '" << report.path << "' is damaged ("
            << report.problems.front() << (report.problems.size() > 1 ? ", ..." : "")
            << "); restore it from a backup\n";
    env.exit_code = kExitFailure;
  }
  return Ok();
}

// Rewrites are for SQLite files; PostgreSQL keeps its own pages.
Result<void> RequireSqlite(const std::string& journal, const std::string& what) {
  if (storage::BackendOf(journal) != storage::BackendKind::kPostgres) return Ok();
  return Err(Errc::kInvalidArgument,
             "'" + journal + "' is a PostgreSQL journal: " + what + " works on SQLite files; "
             "use PostgreSQL's own tools (VACUUM, pg_basebackup; data checksums: pg_checksums)");
}

void PrintRewrite(CommandEnv& env, const std::string& what,
                  const storage::RewriteReport& report) {
  env.out << what << ": " << report.pages << " pages, each verified; " << report.bytes_before
          << " bytes before, " << report.bytes_after << " after";
  if (!report.page_checksums_before) {
    env.out << (what.starts_with("vacuum") ? "; every page carries a checksum now"
                                           : "; the source has no page checksums, nor the copy");
  }
  env.out << "\n";
}

Result<void> RunVacuum(CommandEnv& env, const std::string& journal) {
  RECKON_TRY(RequireSqlite(journal, "vacuum"));
  RECKON_TRY(storage::RewriteReport report, storage::VacuumJournal(journal));
  PrintRewrite(env, "vacuum of '" + journal + "'", report);
  return Ok();
}

Result<void> RunBackup(CommandEnv& env, const std::string& journal, const std::string& dest) {
  RECKON_TRY(RequireSqlite(journal, "backup"));
  RECKON_TRY(storage::RewriteReport report, storage::BackupJournal(journal, dest));
  PrintRewrite(env, "backup of '" + journal + "' into '" + dest + "'", report);
  return Ok();
}

}  // namespace

void AddAdminCommands(CLI::App& app, CommandEnv& env) {
  CLI::App* admin = app.add_subcommand("admin", "Operator commands on a journal file");
  admin->require_subcommand(1);
  auto args = std::make_shared<CheckArgs>();
  CLI::App* check = admin->add_subcommand(
      "check", "Check a journal's integrity (read-only; works while its owner runs)");
  check->add_option("journal", args->journal, "the journal file")->required();
  check->add_flag("--json", args->json, "print one JSON object");
  check->callback([&env, args] {
    if (auto result = RunCheck(env, *args); !result) {
      ReportError(env, "admin check", result.error());
    }
  });
  auto vacuum_journal = std::make_shared<std::string>();
  CLI::App* vacuum = admin->add_subcommand(
      "vacuum",
      "Rewrite a journal compactly, with a checksum on every page (stop its owner first)");
  vacuum->add_option("journal", *vacuum_journal, "the journal file")->required();
  vacuum->callback([&env, vacuum_journal] {
    if (auto result = RunVacuum(env, *vacuum_journal); !result) {
      ReportError(env, "admin vacuum", result.error());
    }
  });
  auto backup_files = std::make_shared<std::pair<std::string, std::string>>();
  CLI::App* backup = admin->add_subcommand(
      "backup", "Copy a journal into a new file, consistently, while its owner runs");
  backup->add_option("journal", backup_files->first, "the journal file")->required();
  backup->add_option("dest", backup_files->second, "the new file")->required();
  backup->callback([&env, backup_files] {
    if (auto result = RunBackup(env, backup_files->first, backup_files->second); !result) {
      ReportError(env, "admin backup", result.error());
    }
  });
  AddArchiveCommand(*admin, env);
}

}  // namespace reckon::cli
