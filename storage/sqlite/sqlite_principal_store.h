// SqlitePrincipalStore: the PrincipalStore (storage/principal_store.h) in the journal's SQLite
// file (tables `principals` and `audit_log`, docs/JOURNAL_FORMAT.md), on a connection of its
// own. Open it after the journal (the owner applies the migration that creates the tables);
// it waits up to `busy_timeout` for the journal's commits.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "reckon/storage/principal_store.h"
#include "reckon/storage/sqlite/sqlite.h"

namespace reckon::storage {

class SqlitePrincipalStore final : public PrincipalStore {
 public:
  // Errc::kFailedPrecondition when the file has no principals table (a journal of an older
  // release, not yet opened by this one), kUnavailable for I/O.
  static Result<std::unique_ptr<SqlitePrincipalStore>> Open(
      const std::string& journal_path,
      std::chrono::milliseconds busy_timeout = std::chrono::seconds(5));

  Result<void> Create(const PrincipalRow& row, const AuditRow& audit) override;
  Result<std::optional<PrincipalRow>> FindByTokenHash(std::string_view token_hash) override;
  Result<std::vector<PrincipalRow>> List() override;
  Result<PrincipalRow> Revoke(std::string_view name, std::int64_t at_us, std::string_view by,
                              const AuditRow& audit) override;
  Result<std::vector<AuditRow>> ReadAudit() override;

 private:
  explicit SqlitePrincipalStore(SqliteDb db) : db_(std::move(db)) {}
  Result<void> InsertAudit(const AuditRow& audit);
  // Runs `body` in one IMMEDIATE transaction; rolls back if it fails.
  template <typename F>
  auto InTransaction(F&& body) -> decltype(body());

  SqliteDb db_;
};

}  // namespace reckon::storage
