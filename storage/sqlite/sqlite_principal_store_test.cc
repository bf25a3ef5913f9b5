// SQLite-only behaviour of SqlitePrincipalStore. What every backend shares is in the
// conformance suite (storage/testing/store_conformance_test.cc).
#include "reckon/storage/sqlite/sqlite_principal_store.h"

#include <gtest/gtest.h>

#include "reckon/storage/sqlite/sqlite.h"
#include "tests/support/temp_dir.h"

namespace reckon::storage {
namespace {

TEST(SqlitePrincipalStoreTest, RefusesAJournalWithoutThePrincipalsTable) {
  testing::TempDir dir;
  auto raw = SqliteDb::Open(dir.File("plain.db"));
  ASSERT_TRUE(raw);
  ASSERT_TRUE(raw.value().Exec("CREATE TABLE t (x)"));
  auto store = SqlitePrincipalStore::Open(dir.File("plain.db"));
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code(), Errc::kFailedPrecondition);
}

}  // namespace
}  // namespace reckon::storage
