// The journal conformance suite (storage/testing/journal_conformance.h) against
// PostgresJournal: one private server per test binary, a new database per test.
#include "reckon/storage/postgres/postgres_journal.h"

#include "reckon/storage/postgres/pg.h"
#include "reckon/storage/postgres/postgres_outbox_store.h"
#include "reckon/storage/postgres/postgres_principal_store.h"
#include "reckon/storage/postgres/schema.h"
#include "reckon/storage/testing/journal_conformance.h"
#include "reckon/storage/testing/postgres_test_env.h"

namespace reckon::storage {
namespace {

class PostgresBackend final : public JournalBackend {
 public:
  Result<std::unique_ptr<Journal>> Open(const PayloadCodec* codec) override {
    RECKON_TRY(conninfo_, FreshDatabase());
    return Reopen(codec);
  }
  Result<std::unique_ptr<Journal>> Reopen(const PayloadCodec* codec) override {
    PostgresJournalOptions options;
    options.payload_codec = codec;
    return OpenPostgresJournal(conninfo_, options);
  }
  Result<std::unique_ptr<OutboxStore>> OpenOutboxStore(const PayloadCodec* codec) override {
    RECKON_TRY(auto store, PostgresOutboxStore::Open(conninfo_, codec));
    return std::unique_ptr<OutboxStore>(std::move(store));
  }
  Result<std::unique_ptr<PrincipalStore>> OpenPrincipalStore() override {
    RECKON_TRY(auto store, PostgresPrincipalStore::Open(conninfo_));
    return std::unique_ptr<PrincipalStore>(std::move(store));
  }
  Result<std::int64_t> QueryInt(const std::string& sql) override {
    RECKON_TRY(PgConnection conn, PgConnection::Connect(conninfo_));
    RECKON_TRY(PgResult result, conn.Query(sql));
    if (result.rows() != 1) return Err(Errc::kInternal, "not one row: " + sql);
    return result.Int(0, 0);
  }
  int newest_schema_version() const override { return PgJournalMigrations().back().version; }

 private:
  std::string conninfo_;
};

INSTANTIATE_TEST_SUITE_P(Postgres, JournalConformanceTest,
                         ::testing::Values(JournalBackendParam{
                             "postgres", [] { return std::make_unique<PostgresBackend>(); }}),
                         JournalBackendName);

}  // namespace
}  // namespace reckon::storage
