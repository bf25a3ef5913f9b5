#include "samples/payments_provider/ledger.h"

#include <cstdio>

namespace reckon::samples::provider {
namespace {

constexpr std::string_view kSchema = R"sql(
CREATE TABLE IF NOT EXISTS refunds (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  payment_id TEXT NOT NULL,
  amount_cents INTEGER NOT NULL,
  reason TEXT NOT NULL,
  idempotency_key TEXT,
  created_at TEXT NOT NULL,
  card_token TEXT
);
CREATE INDEX IF NOT EXISTS refunds_by_key ON refunds(idempotency_key, seq);
)sql";

constexpr std::string_view kColumns =
    "seq, payment_id, amount_cents, reason, idempotency_key, created_at, card_token";

std::string RefundId(std::int64_t seq, std::string_view card_token) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%06lld", static_cast<long long>(seq));
  if (card_token.empty()) return "re_" + std::string(buffer);
  return "re_" + std::string(card_token) + "_" + buffer;
}

Refund ReadRow(const storage::Statement& row) {
  Refund refund;
  refund.refund_id =
      RefundId(row.ColumnInt(0), row.ColumnIsNull(6) ? std::string_view() : row.ColumnText(6));
  refund.payment_id = std::string(row.ColumnText(1));
  refund.amount_cents = row.ColumnInt(2);
  refund.reason = std::string(row.ColumnText(3));
  if (!row.ColumnIsNull(4)) refund.idempotency_key = std::string(row.ColumnText(4));
  refund.created_at = std::string(row.ColumnText(5));
  return refund;
}

}  // namespace

Result<Ledger> Ledger::Open(const std::string& path) {
  RECKON_TRY(storage::SqliteDb db, storage::SqliteDb::Open(path));
  RECKON_TRY(std::string mode, db.QueryText("PRAGMA journal_mode=WAL"));
  if (mode != "wal") {
    return Err(Errc::kFailedPrecondition,
               "ledger '" + path + "' cannot use WAL (journal_mode is '" + mode + "')");
  }
  RECKON_TRY(db.Exec("PRAGMA synchronous=FULL"));
  RECKON_TRY(db.Exec(kSchema));
  RECKON_TRY(std::int64_t has_card_token,
             db.QueryInt("SELECT count(*) FROM pragma_table_info('refunds') "
                         "WHERE name = 'card_token'"));
  if (has_card_token == 0) {
    RECKON_TRY(db.Exec("ALTER TABLE refunds ADD COLUMN card_token TEXT"));
  }
  RECKON_TRY(storage::Statement insert,
             db.Prepare("INSERT INTO refunds(payment_id, amount_cents, reason, "
                        "idempotency_key, created_at, card_token) "
                        "VALUES(?1, ?2, ?3, ?4, ?5, ?6) RETURNING seq"));
  RECKON_TRY(storage::Statement find,
             db.Prepare("SELECT " + std::string(kColumns) +
                        " FROM refunds WHERE idempotency_key = ?1 ORDER BY seq LIMIT 1"));
  RECKON_TRY(storage::Statement list,
             db.Prepare("SELECT " + std::string(kColumns) + " FROM refunds ORDER BY seq"));
  return Ledger(std::move(db), std::move(insert), std::move(find), std::move(list));
}

Result<Refund> Ledger::Insert(const NewRefund& refund) {
  insert_.Reset();
  insert_.Bind(1, refund.payment_id).Bind(2, refund.amount_cents).Bind(3, refund.reason);
  if (refund.idempotency_key) {
    insert_.Bind(4, *refund.idempotency_key);
  } else {
    insert_.BindNull(4);
  }
  insert_.Bind(5, refund.created_at);
  if (refund.echoed_card_token.empty()) {
    insert_.BindNull(6);
  } else {
    insert_.Bind(6, refund.echoed_card_token);
  }
  RECKON_TRY(bool row, insert_.Step());
  if (!row) return Err(Errc::kInternal, "INSERT ... RETURNING seq returned no row");
  std::int64_t seq = insert_.ColumnInt(0);
  // Stepping to the end finishes the statement, which commits the implicit transaction.
  RECKON_TRY(bool more, insert_.Step());
  insert_.Reset();
  if (more) return Err(Errc::kInternal, "INSERT ... RETURNING seq returned two rows");
  return Refund{RefundId(seq, refund.echoed_card_token), refund.payment_id, refund.amount_cents, refund.reason,
                refund.idempotency_key, refund.created_at};
}

Result<std::optional<Refund>> Ledger::FindByKey(std::string_view idempotency_key) {
  find_.Reset();
  find_.Bind(1, idempotency_key);
  RECKON_TRY(bool row, find_.Step());
  std::optional<Refund> found;
  if (row) found = ReadRow(find_);
  find_.Reset();
  return found;
}

Result<std::vector<Refund>> Ledger::List() {
  list_.Reset();
  std::vector<Refund> refunds;
  for (;;) {
    RECKON_TRY(bool row, list_.Step());
    if (!row) break;
    refunds.push_back(ReadRow(list_));
  }
  list_.Reset();
  return refunds;
}

}  // namespace reckon::samples::provider
