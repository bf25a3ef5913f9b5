// SQLite-only behaviour of SqliteOutboxStore. What every backend shares is in the conformance
// suite (storage/testing/store_conformance_test.cc).
#include "reckon/storage/sqlite/sqlite_outbox_store.h"

#include <gtest/gtest.h>

#include "reckon/storage/sqlite/sqlite.h"
#include "reckon/storage/sqlite/sqlite_journal.h"
#include "reckon/storage/testing/reversing_codec.h"
#include "tests/support/temp_dir.h"

namespace reckon::storage {
namespace {

TEST(SqliteOutboxStoreTest, TheFileHoldsNoClearPayloadWhenTheJournalHasACodec) {
  testing::TempDir dir;
  ReversingCodec codec;
  SqliteJournalOptions options;
  options.payload_codec = &codec;
  auto journal = SqliteJournal::Open(dir.File("journal.db"), options);
  ASSERT_TRUE(journal) << journal.error().ToString();
  AppendRequest request;
  request.run = {"wf-1", "r1"};
  request.events = {MarkerRecorded{"publish#1", "publish", "{}"}};
  request.outbox = {OutboxMessage{"msg_s", "publish#1", "orders", "secret-amount"}};
  ASSERT_TRUE(journal.value()->Append(request));
  auto db = SqliteDb::Open(dir.File("journal.db"), /*read_only=*/true);
  ASSERT_TRUE(db);
  auto clear = db.value().QueryInt("SELECT count(*) FROM outbox WHERE instr(payload, 'secret')");
  ASSERT_TRUE(clear);
  EXPECT_EQ(clear.value(), 0);
}

TEST(SqliteOutboxStoreTest, RefusesAFileWithoutTheOutboxTables) {
  testing::TempDir dir;
  auto raw = SqliteDb::Open(dir.File("plain.db"));
  ASSERT_TRUE(raw);
  ASSERT_TRUE(raw.value().Exec("CREATE TABLE t (x)"));
  auto store = SqliteOutboxStore::Open(dir.File("plain.db"), nullptr);
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code(), Errc::kFailedPrecondition);
}

}  // namespace
}  // namespace reckon::storage
