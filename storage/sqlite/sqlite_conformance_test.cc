// The journal conformance suite (storage/testing/journal_conformance.h) against SqliteJournal:
// a new file per test, in the test's own temporary directory.
#include "reckon/storage/sqlite/sqlite_journal.h"

#include "reckon/storage/sqlite/schema.h"
#include "reckon/storage/sqlite/sqlite.h"
#include "reckon/storage/sqlite/sqlite_outbox_store.h"
#include "reckon/storage/sqlite/sqlite_principal_store.h"
#include "reckon/storage/testing/journal_conformance.h"
#include "tests/support/temp_dir.h"

namespace reckon::storage {
namespace {

class SqliteBackend final : public JournalBackend {
 public:
  Result<std::unique_ptr<Journal>> Open(const PayloadCodec* codec) override {
    SqliteJournalOptions options;
    options.payload_codec = codec;
    return OpenSqliteJournal(path(), options);
  }
  Result<std::unique_ptr<Journal>> Reopen(const PayloadCodec* codec) override {
    return Open(codec);
  }
  Result<std::unique_ptr<OutboxStore>> OpenOutboxStore(const PayloadCodec* codec) override {
    RECKON_TRY(auto store, SqliteOutboxStore::Open(path(), codec));
    return std::unique_ptr<OutboxStore>(std::move(store));
  }
  Result<std::unique_ptr<PrincipalStore>> OpenPrincipalStore() override {
    RECKON_TRY(auto store, SqlitePrincipalStore::Open(path()));
    return std::unique_ptr<PrincipalStore>(std::move(store));
  }
  Result<std::int64_t> QueryInt(const std::string& sql) override {
    RECKON_TRY(SqliteDb db, SqliteDb::Open(path(), /*read_only=*/true));
    return db.QueryInt(sql);
  }
  int newest_schema_version() const override { return JournalMigrations().back().version; }

 private:
  std::string path() const { return dir_.File("journal.db"); }
  testing::TempDir dir_;
};

INSTANTIATE_TEST_SUITE_P(Sqlite, JournalConformanceTest,
                         ::testing::Values(JournalBackendParam{
                             "sqlite", [] { return std::make_unique<SqliteBackend>(); }}),
                         JournalBackendName);

}  // namespace
}  // namespace reckon::storage
