// PrincipalStore: where server mode keeps its principals (who may call it, with which role)
// and the audit log of changes to them, beside the journal (docs/SECURITY.md).
//
// A principal is a name, a role, optional scopes and the SHA-256 of its API token; the token
// itself is never stored. Names are unique among principals that are not revoked; a revoked
// principal stays listed (who had access, until when) and its name may be given again.
// Every change is written together with its audit row, in one transaction.
//
// Threads: one store belongs to one thread at a time. Errors: Errc::kUnavailable for I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reckon/base/error.h"

namespace reckon::storage {

struct PrincipalRow {
  std::string name;
  std::string role;                 // auth/role.h: admin, operator, approver, reader, worker
  std::vector<std::string> scopes;  // tool names / workflow types it is limited to; empty: all
  std::string token_hash;           // lowercase hex SHA-256 of the token
  std::int64_t created_at_us = 0;
  std::string created_by;
  std::int64_t expires_at_us = 0;  // 0: never
  std::int64_t revoked_at_us = 0;  // 0: not revoked
  std::string revoked_by;
};

// How every backend stores PrincipalRow::scopes in one text column: comma-separated (scopes
// are names without commas, base/identifier rules), and back.
std::string JoinScopes(const std::vector<std::string>& scopes);
std::vector<std::string> SplitScopes(std::string_view text);

// One line of the audit log: `principal` did `action` ("token_create", "token_revoke") to
// `subject`; `detail` is JSON text without secrets.
struct AuditRow {
  std::int64_t at_us = 0;
  std::string principal;
  std::string action;
  std::string subject;
  std::string detail;
};

class PrincipalStore {
 public:
  virtual ~PrincipalStore() = default;

  // Adds `row` and `audit`. Errc::kAlreadyExists when a principal that is not revoked has the
  // name (or, vanishingly unlikely, the token hash).
  virtual Result<void> Create(const PrincipalRow& row, const AuditRow& audit) = 0;
  // The principal whose token hashes to `token_hash` (revoked and expired ones included: the
  // caller decides), or nullopt.
  virtual Result<std::optional<PrincipalRow>> FindByTokenHash(std::string_view token_hash) = 0;
  // Every principal, revoked ones too, by name then creation time.
  virtual Result<std::vector<PrincipalRow>> List() = 0;
  // Revokes the principal `name` that is not revoked yet, with `audit`; returns it as revoked.
  // Errc::kNotFound when there is none.
  virtual Result<PrincipalRow> Revoke(std::string_view name, std::int64_t at_us,
                                      std::string_view by, const AuditRow& audit) = 0;
  virtual Result<std::vector<AuditRow>> ReadAudit() = 0;
};

}  // namespace reckon::storage
