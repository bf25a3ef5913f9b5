#include "samples/outbox_consumer/dedup_consumer.h"

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace reckon::samples {
namespace {

constexpr std::string_view kLedger =
    "CREATE TABLE IF NOT EXISTS ledger (entry INTEGER PRIMARY KEY, payload TEXT NOT NULL)";

Result<void> AddToLedger(storage::SqliteDb& db, std::string_view payload) {
  RECKON_TRY(storage::Statement s, db.Prepare("INSERT INTO ledger (payload) VALUES (?1)"));
  s.Bind(1, payload);
  return s.Run();
}

std::int64_t LedgerRows(DedupConsumer& consumer) {
  return consumer.db().QueryInt("SELECT count(*) FROM ledger").value();
}

TEST(DedupConsumer, ProcessesEachMessageIdOnceEvenAcrossRestarts) {
  testing::TempDir dir;
  {
    auto consumer = DedupConsumer::Open(dir.File("consumer.db"), kLedger);
    ASSERT_TRUE(consumer) << consumer.error().ToString();
    EXPECT_TRUE(consumer.value()->Process("msg_1", "a", AddToLedger).value());
    EXPECT_FALSE(consumer.value()->Process("msg_1", "a", AddToLedger).value());
    EXPECT_TRUE(consumer.value()->Process("msg_2", "b", AddToLedger).value());
    EXPECT_EQ(consumer.value()->duplicates_skipped(), 1);
  }
  // A redelivery long after the broker's duplicate window, to a restarted consumer.
  auto consumer = DedupConsumer::Open(dir.File("consumer.db"), kLedger);
  ASSERT_TRUE(consumer);
  EXPECT_FALSE(consumer.value()->Process("msg_1", "a", AddToLedger).value());
  EXPECT_EQ(LedgerRows(*consumer.value()), 2);
  EXPECT_EQ(consumer.value()->ProcessedCount().value(), 2);
  // The copies skipped by both lives are counted in the database.
  EXPECT_EQ(consumer.value()->duplicates_skipped(), 1);
  EXPECT_EQ(consumer.value()->SkippedCopiesTotal().value(), 2);
}

TEST(DedupConsumer, AFailedBusinessWriteLeavesTheMessageUnprocessed) {
  testing::TempDir dir;
  auto consumer = DedupConsumer::Open(dir.File("consumer.db"), kLedger);
  ASSERT_TRUE(consumer);
  auto failing = [](storage::SqliteDb& db, std::string_view payload) -> Result<void> {
    RECKON_TRY(AddToLedger(db, payload));
    return Err(Errc::kUnavailable, "the business system is down");
  };
  EXPECT_FALSE(consumer.value()->Process("msg_1", "a", failing));
  EXPECT_EQ(LedgerRows(*consumer.value()), 0);           // the write rolled back with the id
  EXPECT_EQ(consumer.value()->ProcessedCount().value(), 0);
  EXPECT_TRUE(consumer.value()->Process("msg_1", "a", AddToLedger).value());  // redelivered
  EXPECT_EQ(LedgerRows(*consumer.value()), 1);
}

}  // namespace
}  // namespace reckon::samples
