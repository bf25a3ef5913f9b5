#include "reckon/storage/postgres/postgres_check.h"

#include <algorithm>
#include <string_view>

#include "reckon/storage/postgres/postgres_journal.h"
#include "reckon/storage/postgres/schema.h"

namespace reckon::storage {
namespace {

std::int64_t CountOrProblem(PgConnection& conn, const std::string& table,
                            JournalCheckReport& report) {
  auto result = conn.Query("SELECT count(*) FROM " + table);
  if (result && result.value().rows() == 1) return result.value().Int(0, 0);
  report.problems.push_back("counting " + table + ": " +
                            (result ? std::string("no row") : result.error().message()));
  return -1;
}

}  // namespace

Result<bool> DataChecksumsOn(PgConnection& conn) {
  RECKON_TRY(PgResult result, conn.Query("SHOW data_checksums"));
  return result.rows() == 1 && result.Text(0, 0) == "on";
}

std::string NoDataChecksumsWarning(const std::string& display) {
  return "the PostgreSQL cluster of journal '" + display + "' has data checksums off: a "
         "damaged page would be read as if it were sound. Enable them with `pg_checksums "
         "--enable` while the cluster is stopped (or create clusters with `initdb "
         "--data-checksums`)";
}

Result<JournalCheckReport> CheckPostgresJournal(const std::string& conninfo) {
  RECKON_TRY(PgConnection conn, PgConnection::Connect(conninfo));
  JournalCheckReport report;
  report.path = conn.display();
  RECKON_TRY(bool checksums, DataChecksumsOn(conn));
  report.page_checksums = checksums ? "on" : "off";
  if (!checksums) report.warnings.push_back(NoDataChecksumsWarning(report.path));
  auto version = PgSchemaVersion(conn);
  if (!version) {
    report.problems.push_back("schema version: " + version.error().message());
    return report;
  }
  report.schema_version = version.value();
  if (report.schema_version == 0) {
    report.problems.push_back("not a Reckon journal (no reckon_schema table)");
    return report;
  }
  report.runs = CountOrProblem(conn, "runs", report);
  report.events = CountOrProblem(conn, "events", report);
  report.operations = CountOrProblem(conn, "operations", report);
  PostgresJournalOptions options;
  options.mode = PostgresJournalOptions::Mode::kCompanion;  // reads only, no lock
  auto journal = OpenPostgresJournal(conninfo, options);
  if (!journal) {
    report.problems.push_back("integrity: " + journal.error().message());
    return report;
  }
  auto integrity = journal.value()->IntegrityCheck();
  if (!integrity) {
    report.problems.push_back("integrity: " + integrity.error().message());
  } else if (integrity.value() != "ok") {
    std::string_view text = integrity.value();
    while (!text.empty()) {
      const std::size_t end = std::min(text.find('\n'), text.size());
      report.problems.emplace_back(text.substr(0, end));
      text.remove_prefix(std::min(end + 1, text.size()));
    }
  }
  return report;
}

}  // namespace reckon::storage
