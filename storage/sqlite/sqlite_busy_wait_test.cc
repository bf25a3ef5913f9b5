// SqliteDb::SetBusyWait: a connection that finds the write lock held waits for it (polling)
// and gets it once the holder commits; after its limit it gives up with a retryable error.
#include "reckon/storage/sqlite/sqlite.h"

#include <gtest/gtest.h>

#include <thread>

#include "tests/support/temp_dir.h"

namespace reckon::storage {
namespace {

using namespace std::chrono_literals;

SqliteDb OpenWal(const std::string& path) {
  auto db = SqliteDb::Open(path);
  EXPECT_TRUE(db) << db.error().ToString();
  EXPECT_TRUE(db.value().QueryText("PRAGMA journal_mode = WAL"));
  return std::move(db).value();
}

TEST(SqliteBusyWaitTest, WaitsForTheLockAndTakesItWhenTheHolderCommits) {
  testing::TempDir dir;
  SqliteDb holder = OpenWal(dir.File("db"));
  ASSERT_TRUE(holder.Exec("CREATE TABLE t (x INTEGER)"));
  SqliteDb waiter = OpenWal(dir.File("db"));
  waiter.SetBusyWait(30s);  // far beyond the holder's transaction: it must not give up
  ASSERT_TRUE(holder.Exec("BEGIN IMMEDIATE; INSERT INTO t VALUES (1)"));
  std::thread commit([&holder] {
    std::this_thread::sleep_for(20ms);  // let the waiter find the lock held
    EXPECT_TRUE(holder.Exec("COMMIT"));
  });
  auto got = waiter.Exec("BEGIN IMMEDIATE; INSERT INTO t VALUES (2); COMMIT");
  commit.join();
  ASSERT_TRUE(got) << got.error().ToString();
  EXPECT_EQ(waiter.QueryInt("SELECT count(*) FROM t").value(), 2);
}

TEST(SqliteBusyWaitTest, GivesUpAfterItsLimitWithARetryableError) {
  testing::TempDir dir;
  SqliteDb holder = OpenWal(dir.File("db"));
  ASSERT_TRUE(holder.Exec("CREATE TABLE t (x INTEGER)"));
  SqliteDb waiter = OpenWal(dir.File("db"));
  waiter.SetBusyWait(5ms);
  ASSERT_TRUE(holder.Exec("BEGIN IMMEDIATE"));
  auto refused = waiter.Exec("BEGIN IMMEDIATE");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::kUnavailable) << refused.error().ToString();
  ASSERT_TRUE(holder.Exec("COMMIT"));
  EXPECT_TRUE(waiter.Exec("BEGIN IMMEDIATE; COMMIT"));
}

}  // namespace
}  // namespace reckon::storage
