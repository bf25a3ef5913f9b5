#include "reckon/storage/sqlite/journal_check.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string_view>

#include "reckon/storage/sqlite/checksum_vfs.h"
#include "reckon/storage/sqlite/journal_checksums.h"
#include "reckon/storage/sqlite/journal_lock.h"
#include "reckon/storage/sqlite/page_scan.h"
#include "reckon/storage/sqlite/schema.h"
#include "reckon/storage/sqlite/sqlite.h"

namespace reckon::storage {
namespace {

// The single number `sql` yields, or -1 with a problem recorded.
std::int64_t CountOrProblem(SqliteDb& db, const std::string& sql, const std::string& what,
                            JournalCheckReport& report) {
  auto value = db.QueryInt(sql);
  if (value) return value.value();
  report.problems.push_back(what + ": " + value.error().message());
  return -1;
}

// One problem per line of an integrity_check row, without SQLite's "*** in database main ***"
// headings.
void AddProblemLines(std::string_view text, std::vector<std::string>& problems) {
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    if (!line.empty() && !line.starts_with("*** in database")) problems.emplace_back(line);
  }
}

void RunIntegrityCheck(SqliteDb& db, int max_problems, JournalCheckReport& report) {
  auto stmt = db.Prepare("PRAGMA integrity_check(" + std::to_string(max_problems) + ")");
  if (!stmt) {
    report.problems.push_back("integrity_check: " + stmt.error().message());
    return;
  }
  while (true) {
    auto row = stmt.value().Step();
    if (!row) {
      // SQLite may list the damage and then fail on it: the list says more than the failure.
      if (report.problems.empty()) {
        report.problems.push_back("integrity_check: " + row.error().message());
      }
      return;
    }
    if (!row.value()) return;
    std::string_view text = stmt.value().ColumnText(0);
    if (text != "ok") AddProblemLines(text, report.problems);
  }
}

void VerifyPageChecksums(SqliteDb& db, JournalCheckReport& report) {
  auto scan = ScanPages(db);
  if (!scan) {
    report.problems.push_back("page checksums: " + scan.error().message());
    return;
  }
  if (!scan.value().sealed) {
    report.page_checksums = "off";
    report.warnings.push_back(NoChecksumsWarning(db.path()));
    return;
  }
  report.page_checksums = "on";
  report.pages_verified = scan.value().main_pages;
  report.wal_frames_verified = scan.value().wal_frames;
  // The walk through SQLite costs another read of every b-tree: only when something failed,
  // here or in the integrity check before (a frame the live wal-index still uses may lie past
  // where SQLite's recovery, and so the scan, would stop).
  const std::optional<ChecksumState> state = ChecksumStateOf(db.handle());
  if (scan.value().damaged.empty() && !(state && state->last_fault)) return;
  const std::vector<OwnedFault> walked = WalkForDamage(db);
  auto same = [](const ChecksumFault& a, const ChecksumFault& b) {
    return a.file == b.file && a.page == b.page && a.wal_frame == b.wal_frame;
  };
  auto owner_of = [&](const ChecksumFault& fault) -> const std::string* {
    for (const OwnedFault& w : walked) {
      if (w.fault.page == fault.page) return &w.owner;
    }
    return nullptr;
  };
  for (const ChecksumFault& fault : scan.value().damaged) {
    const std::string* owner = owner_of(fault);
    report.problems.push_back(
        (owner != nullptr ? "table or index '" + *owner + "': " : std::string()) +
        fault.Where() + " fails its checksum" +
        (owner != nullptr ? "" : " (not reached through any table or index: a free page, "
                                 "a copy the -wal supersedes, or a page below another "
                                 "damaged one)"));
  }
  for (const OwnedFault& w : walked) {
    const bool listed = std::any_of(scan.value().damaged.begin(), scan.value().damaged.end(),
                                    [&](const ChecksumFault& f) { return same(f, w.fault); });
    if (listed) continue;
    report.problems.push_back("table or index '" + w.owner + "': " + w.fault.Where() +
                              " fails its checksum" +
                              (w.fault.wal_frame != 0
                                   ? " (SQLite's own recovery would end the -wal before this "
                                     "frame and drop the commits after it)"
                                   : ""));
  }
}

}  // namespace

Result<void> QuickCheckAtOpen(SqliteDb& db) {
  constexpr int kShown = 5;
  auto damaged = [&db](const std::string& problems) {
    return Err(Errc::kCorruption, "journal '" + db.path() + "' is damaged (" + problems +
                                      "); refusing to open it. Restore it from a backup, and "
                                      "run `reckon admin check " + db.path() +
                                      "` for the full report");
  };
  RECKON_TRY(auto stmt, db.Prepare("PRAGMA quick_check(" + std::to_string(kShown) + ")"));
  std::string problems;
  while (true) {
    auto row = stmt.Step();
    if (!row && row.error().code() == Errc::kCorruption) return damaged(row.error().message());
    if (!row) return row.error().WithContext("checking journal integrity at open");
    if (!row.value()) break;
    std::string line(stmt.ColumnText(0));
    if (line == "ok") return Ok();
    if (line.starts_with("*** in database main ***\n")) line.erase(0, 25);
    std::replace(line.begin(), line.end(), '\n', ';');
    problems += problems.empty() ? "PRAGMA quick_check: " : "; ";
    problems += line;
  }
  // SQLite reports a page it could not read as "unable to get the page"; say why.
  if (const std::optional<ChecksumState> state = ChecksumStateOf(db.handle());
      state && state->last_fault) {
    problems += "; " + state->last_fault->Describe();
  }
  return damaged(problems);
}

Result<void> RequireCurrentSchema(SqliteDb& db) {
  RECKON_TRY(std::int64_t version, db.QueryInt("PRAGMA user_version"));
  const std::span<const Migration> migrations = JournalMigrations();
  const int newest = migrations.empty() ? 0 : migrations.back().version;
  if (version == newest) return Ok();
  return Err(Errc::kFailedPrecondition,
             "journal '" + db.path() + "' has schema version " + std::to_string(version) +
                 " and this release reads version " + std::to_string(newest) +
                 (version < newest ? "; open it once with an engine of this release to migrate"
                                   : "; use a newer reckon"));
}

Result<JournalCheckReport> CheckJournal(const std::string& path, int max_problems) {
  if (!std::filesystem::exists(path)) {
    return Err(Errc::kNotFound, "journal '" + path + "' does not exist");
  }
  JournalCheckReport report;
  report.path = path;
  report.owner = JournalLock::DescribeHolder(path);
  RECKON_TRY(SqliteDb db, SqliteDb::Open(path, /*read_only=*/true));
  sqlite3_busy_timeout(db.handle(), 5000);
  report.schema_version = CountOrProblem(db, "PRAGMA user_version", "schema version", report);
  if (!report.problems.empty()) return report;  // not even the header reads: nothing else will
  if (report.schema_version == 0) {
    report.problems.push_back("not a Reckon journal (schema version 0: no tables)");
    return report;
  }
  RunIntegrityCheck(db, max_problems, report);
  report.runs = CountOrProblem(db, "SELECT count(*) FROM runs", "counting runs", report);
  report.events = CountOrProblem(db, "SELECT count(*) FROM events", "counting events", report);
  report.operations =
      CountOrProblem(db, "SELECT count(*) FROM operations", "counting operations", report);
  VerifyPageChecksums(db, report);
  return report;
}

}  // namespace reckon::storage
