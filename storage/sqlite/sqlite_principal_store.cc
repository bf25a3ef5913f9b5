#include "reckon/storage/sqlite/sqlite_principal_store.h"

#include <utility>

namespace reckon::storage {
namespace {

constexpr std::string_view kColumns =
    "name, role, scopes, token_hash, created_at_us, created_by, expires_at_us, revoked_at_us, "
    "revoked_by";

PrincipalRow ReadRow(const Statement& s) {
  PrincipalRow row;
  row.name = std::string(s.ColumnText(0));
  row.role = std::string(s.ColumnText(1));
  row.scopes = SplitScopes(s.ColumnText(2));
  row.token_hash = std::string(s.ColumnText(3));
  row.created_at_us = s.ColumnInt(4);
  row.created_by = std::string(s.ColumnText(5));
  row.expires_at_us = s.ColumnInt(6);
  row.revoked_at_us = s.ColumnInt(7);
  row.revoked_by = std::string(s.ColumnText(8));
  return row;
}

Result<std::vector<PrincipalRow>> ReadRows(Statement statement) {
  std::vector<PrincipalRow> rows;
  while (true) {
    RECKON_TRY(bool more, statement.Step());
    if (!more) break;
    rows.push_back(ReadRow(statement));
  }
  return rows;
}

}  // namespace

Result<std::unique_ptr<SqlitePrincipalStore>> SqlitePrincipalStore::Open(
    const std::string& journal_path, std::chrono::milliseconds busy_timeout) {
  RECKON_TRY(SqliteDb db, SqliteDb::Open(journal_path));
  RECKON_TRY(db.Exec("PRAGMA busy_timeout = " + std::to_string(busy_timeout.count())));
  RECKON_TRY(std::int64_t tables,
             db.QueryInt("SELECT count(*) FROM sqlite_master WHERE name = 'principals'"));
  if (tables == 0) {
    return Err(Errc::kFailedPrecondition,
               "journal '" + journal_path +
                   "' has no principals table: open it with this release's server first");
  }
  return std::unique_ptr<SqlitePrincipalStore>(new SqlitePrincipalStore(std::move(db)));
}

template <typename F>
auto SqlitePrincipalStore::InTransaction(F&& body) -> decltype(body()) {
  RECKON_TRY(db_.Exec("BEGIN IMMEDIATE"));
  auto result = body();
  if (!result) {
    (void)db_.Exec("ROLLBACK");
    return result;
  }
  if (auto committed = db_.Exec("COMMIT"); !committed) {
    (void)db_.Exec("ROLLBACK");
    return committed.error();
  }
  return result;
}

Result<void> SqlitePrincipalStore::InsertAudit(const AuditRow& audit) {
  RECKON_TRY(Statement s, db_.Prepare("INSERT INTO audit_log (at_us, principal, action, subject, "
                                      "detail) VALUES (?, ?, ?, ?, ?)"));
  s.Bind(1, audit.at_us).Bind(2, audit.principal).Bind(3, audit.action).Bind(4, audit.subject);
  s.Bind(5, audit.detail);
  return s.Run();
}

Result<void> SqlitePrincipalStore::Create(const PrincipalRow& row, const AuditRow& audit) {
  return InTransaction([&]() -> Result<void> {
    RECKON_TRY(Statement s, db_.Prepare("INSERT INTO principals (" + std::string(kColumns) +
                                        ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    s.Bind(1, row.name).Bind(2, row.role).Bind(3, JoinScopes(row.scopes)).Bind(4, row.token_hash);
    s.Bind(5, row.created_at_us).Bind(6, row.created_by).Bind(7, row.expires_at_us);
    s.Bind(8, row.revoked_at_us).Bind(9, row.revoked_by);
    if (auto inserted = s.Run(); !inserted) {
      if (inserted.error().code() == Errc::kAlreadyExists) {
        return Err(Errc::kAlreadyExists,
                   "a principal named '" + row.name +
                       "' exists already: revoke it first, or choose another name");
      }
      return inserted.error();
    }
    return InsertAudit(audit);
  });
}

Result<std::optional<PrincipalRow>> SqlitePrincipalStore::FindByTokenHash(
    std::string_view token_hash) {
  RECKON_TRY(Statement s, db_.Prepare("SELECT " + std::string(kColumns) +
                                      " FROM principals WHERE token_hash = ?"));
  s.Bind(1, token_hash);
  RECKON_TRY(bool found, s.Step());
  if (!found) return std::optional<PrincipalRow>();
  return std::optional<PrincipalRow>(ReadRow(s));
}

Result<std::vector<PrincipalRow>> SqlitePrincipalStore::List() {
  RECKON_TRY(Statement s, db_.Prepare("SELECT " + std::string(kColumns) +
                                      " FROM principals ORDER BY name, created_at_us, id"));
  return ReadRows(std::move(s));
}

Result<PrincipalRow> SqlitePrincipalStore::Revoke(std::string_view name, std::int64_t at_us,
                                                  std::string_view by, const AuditRow& audit) {
  return InTransaction([&]() -> Result<PrincipalRow> {
    RECKON_TRY(Statement find, db_.Prepare("SELECT " + std::string(kColumns) +
                                           " FROM principals WHERE name = ? AND "
                                           "revoked_at_us = 0"));
    find.Bind(1, name);
    RECKON_TRY(bool found, find.Step());
    if (!found) {
      return Err(Errc::kNotFound, "no principal named '" + std::string(name) +
                                      "' that is not revoked (`reckon auth token list` lists them)");
    }
    PrincipalRow row = ReadRow(find);
    RECKON_TRY(Statement s, db_.Prepare("UPDATE principals SET revoked_at_us = ?, revoked_by = ? "
                                        "WHERE name = ? AND revoked_at_us = 0"));
    s.Bind(1, at_us).Bind(2, by).Bind(3, name);
    RECKON_TRY(s.Run());
    RECKON_TRY(InsertAudit(audit));
    row.revoked_at_us = at_us;
    row.revoked_by = std::string(by);
    return row;
  });
}

Result<std::vector<AuditRow>> SqlitePrincipalStore::ReadAudit() {
  RECKON_TRY(Statement s, db_.Prepare("SELECT at_us, principal, action, subject, detail FROM "
                                      "audit_log ORDER BY id"));
  std::vector<AuditRow> rows;
  while (true) {
    RECKON_TRY(bool more, s.Step());
    if (!more) break;
    rows.push_back(AuditRow{s.ColumnInt(0), std::string(s.ColumnText(1)),
                            std::string(s.ColumnText(2)), std::string(s.ColumnText(3)),
                            std::string(s.ColumnText(4))});
  }
  return rows;
}

}  // namespace reckon::storage
