#include "reckon/storage/postgres/postgres_principal_store.h"

#include <utility>

#include "reckon/storage/postgres/schema.h"

namespace reckon::storage {
namespace {

constexpr const char* kColumns =
    "name, role, scopes, token_hash, created_at_us, created_by, expires_at_us, revoked_at_us, "
    "revoked_by";

PrincipalRow ReadRow(const PgResult& r, int i) {
  PrincipalRow row;
  row.name = r.Text(i, 0);
  row.role = r.Text(i, 1);
  row.scopes = SplitScopes(r.Text(i, 2));
  row.token_hash = r.Text(i, 3);
  row.created_at_us = r.Int(i, 4);
  row.created_by = r.Text(i, 5);
  row.expires_at_us = r.Int(i, 6);
  row.revoked_at_us = r.Int(i, 7);
  row.revoked_by = r.Text(i, 8);
  return row;
}

}  // namespace

Result<std::unique_ptr<PostgresPrincipalStore>> PostgresPrincipalStore::Open(
    const std::string& conninfo) {
  RECKON_TRY(PgConnection conn, PgConnection::Connect(conninfo));
  RECKON_TRY(const int version, PgSchemaVersion(conn));
  if (version < 1) {
    return Err(Errc::kFailedPrecondition,
               "journal '" + conn.display() +
                   "' has no principals table: open it with this release's server first");
  }
  return std::unique_ptr<PostgresPrincipalStore>(new PostgresPrincipalStore(std::move(conn)));
}

Result<PgConnection*> PostgresPrincipalStore::Connection() {
  if (conn_.broken()) {
    RECKON_TRY(conn_.Reconnect());
  }
  return &conn_;
}

template <typename F>
auto PostgresPrincipalStore::InTransaction(F&& body) -> decltype(body()) {
  RECKON_TRY(PgConnection * conn, Connection());
  RECKON_TRY(conn->Exec("BEGIN"));
  auto result = body();
  if (!result) {
    (void)conn->Exec("ROLLBACK");
    return result;
  }
  auto committed = conn->Command("COMMIT");
  if (!committed) return committed.error();
  if (committed.value().command() != "COMMIT") {
    return Err(Errc::kUnavailable, "the server rolled the change to principals back; retry it");
  }
  return result;
}

Result<void> PostgresPrincipalStore::InsertAudit(const AuditRow& audit) {
  PgParams p;
  p.Add(audit.at_us).Add(audit.principal).Add(audit.action).Add(audit.subject).Add(audit.detail);
  RECKON_TRY(conn_.Query("INSERT INTO audit_log (at_us, principal, action, subject, detail) "
                         "VALUES ($1::bigint, $2::text, $3::text, $4::text, $5::text)",
                         p));
  return Ok();
}

Result<void> PostgresPrincipalStore::Create(const PrincipalRow& row, const AuditRow& audit) {
  return InTransaction([&]() -> Result<void> {
    PgParams p;
    p.Add(row.name).Add(row.role).Add(JoinScopes(row.scopes)).Add(row.token_hash)
        .Add(row.created_at_us).Add(row.created_by).Add(row.expires_at_us)
        .Add(row.revoked_at_us).Add(row.revoked_by);
    auto inserted = conn_.Query(std::string("INSERT INTO principals (") + kColumns +
                                    ") VALUES ($1::text, $2::text, $3::text, $4::text, "
                                    "$5::bigint, $6::text, $7::bigint, $8::bigint, $9::text)",
                                p);
    if (!inserted) {
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

Result<std::optional<PrincipalRow>> PostgresPrincipalStore::FindByTokenHash(
    std::string_view token_hash) {
  RECKON_TRY(PgConnection * conn, Connection());
  PgParams p;
  p.Add(token_hash);
  RECKON_TRY(PgResult r, conn->Query(std::string("SELECT ") + kColumns +
                                         " FROM principals WHERE token_hash = $1::text",
                                     p));
  if (r.rows() == 0) return std::optional<PrincipalRow>();
  return std::optional<PrincipalRow>(ReadRow(r, 0));
}

Result<std::vector<PrincipalRow>> PostgresPrincipalStore::List() {
  RECKON_TRY(PgConnection * conn, Connection());
  RECKON_TRY(PgResult r, conn->Query(std::string("SELECT ") + kColumns +
                                     " FROM principals ORDER BY name, created_at_us, id"));
  std::vector<PrincipalRow> rows;
  for (int i = 0; i < r.rows(); ++i) rows.push_back(ReadRow(r, i));
  return rows;
}

Result<PrincipalRow> PostgresPrincipalStore::Revoke(std::string_view name, std::int64_t at_us,
                                                    std::string_view by,
                                                    const AuditRow& audit) {
  return InTransaction([&]() -> Result<PrincipalRow> {
    PgParams p;
    p.Add(at_us).Add(by).Add(name);
    RECKON_TRY(PgResult r, conn_.Query(std::string("UPDATE principals SET revoked_at_us = "
                                                   "$1::bigint, revoked_by = $2::text "
                                                   "WHERE name = $3::text AND revoked_at_us = 0 "
                                                   "RETURNING ") +
                                           kColumns,
                                       p));
    if (r.rows() == 0) {
      return Err(Errc::kNotFound, "no principal named '" + std::string(name) +
                                      "' that is not revoked (`reckon auth token list` lists them)");
    }
    PrincipalRow row = ReadRow(r, 0);
    RECKON_TRY(InsertAudit(audit));
    return row;
  });
}

Result<std::vector<AuditRow>> PostgresPrincipalStore::ReadAudit() {
  RECKON_TRY(PgConnection * conn, Connection());
  RECKON_TRY(PgResult r, conn->Query("SELECT at_us, principal, action, subject, detail FROM "
                                     "audit_log ORDER BY id"));
  std::vector<AuditRow> rows;
  for (int i = 0; i < r.rows(); ++i) {
    rows.push_back(AuditRow{r.Int(i, 0), std::string(r.Text(i, 1)), std::string(r.Text(i, 2)),
                            std::string(r.Text(i, 3)), std::string(r.Text(i, 4))});
  }
  return rows;
}

}  // namespace reckon::storage
