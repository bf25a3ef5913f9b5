// PostgresPrincipalStore: the PrincipalStore (storage/principal_store.h) in a PostgreSQL
// journal's database (tables `principals` and `audit_log`, docs/JOURNAL_FORMAT.md,
// "PostgreSQL"), on a connection of its own. Open it after the journal (whose owner applies
// the migrations). Every change is written with its audit row in one transaction.
//
// A lost connection fails the call with kUnavailable and is made again at the next call.
// Threads: one store belongs to one thread at a time.
#pragma once

#include <memory>
#include <string>

#include "reckon/storage/postgres/pg.h"
#include "reckon/storage/principal_store.h"

namespace reckon::storage {

class PostgresPrincipalStore final : public PrincipalStore {
 public:
  // Errors: kUnavailable (cannot connect), kFailedPrecondition (the database holds no journal
  // of this release yet).
  static Result<std::unique_ptr<PostgresPrincipalStore>> Open(const std::string& conninfo);

  Result<void> Create(const PrincipalRow& row, const AuditRow& audit) override;
  Result<std::optional<PrincipalRow>> FindByTokenHash(std::string_view token_hash) override;
  Result<std::vector<PrincipalRow>> List() override;
  Result<PrincipalRow> Revoke(std::string_view name, std::int64_t at_us, std::string_view by,
                              const AuditRow& audit) override;
  Result<std::vector<AuditRow>> ReadAudit() override;

 private:
  explicit PostgresPrincipalStore(PgConnection conn) : conn_(std::move(conn)) {}
  // The connection, made again if it was lost.
  Result<PgConnection*> Connection();
  Result<void> InsertAudit(const AuditRow& audit);
  // Runs `body` in one transaction; rolls back if it fails.
  template <typename F>
  auto InTransaction(F&& body) -> decltype(body());

  PgConnection conn_;
};

}  // namespace reckon::storage
