#include "reckon/storage/testing/power_loss_vfs.h"

#include <gtest/gtest.h>

#include "reckon/storage/sqlite/sqlite.h"
#include "tests/support/temp_dir.h"

namespace reckon::storage {
namespace {

Result<void> Insert(SqliteDb& db, int from, int to) {
  for (int i = from; i < to; ++i) {
    RECKON_TRY(db.Exec("INSERT INTO t VALUES (" + std::to_string(i) + ", randomblob(700))"));
  }
  return Ok();
}

class PowerLossVfsMetadataTest : public ::testing::TestWithParam<PowerLossVfs::Metadata> {};

// A fresh database switched to WAL, as the journal's first open does: under strict POSIX too,
// the rollback journal's unlink is made durable by the directory sync at the WAL's first sync.
TEST_P(PowerLossVfsMetadataTest, CommittedRowsSurviveACutAndTheFileStaysSound) {
  testing::TempDir dir;
  const std::string path = dir.File("t.db");
  auto registered = PowerLossVfs::Register("power-loss-vfs-test", 7, GetParam());
  ASSERT_TRUE(registered) << registered.error().ToString();
  PowerLossVfs& vfs = *registered.value();
  for (int round = 0; round < 20; ++round) {
    {
      auto db = SqliteDb::Open(path, false, vfs.name());
      ASSERT_TRUE(db) << db.error().ToString();
      ASSERT_TRUE(db.value().Exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; "
                           "PRAGMA wal_autocheckpoint = 8; "
                           "CREATE TABLE IF NOT EXISTS t (k INTEGER PRIMARY KEY, v BLOB)"));
      auto rows = db.value().QueryInt("SELECT count(*) FROM t");
      ASSERT_TRUE(rows) << rows.error().ToString();
      ASSERT_EQ(rows.value(), round * 10) << "round " << round;
      ASSERT_TRUE(Insert(db.value(), round * 10, round * 10 + 10));
      vfs.ArmCut(round % 4);  // the next transaction never commits
      EXPECT_FALSE(db.value().Exec("INSERT INTO t VALUES (-1, randomblob(9000))"));
      EXPECT_TRUE(vfs.powered_off());
    }
    auto rebooted = vfs.Reboot();
    ASSERT_TRUE(rebooted) << rebooted.error().ToString();
    auto db = SqliteDb::Open(path, false, vfs.name());
    ASSERT_TRUE(db);
    auto check = db.value().QueryText("PRAGMA integrity_check");
    ASSERT_TRUE(check);
    EXPECT_EQ(check.value(), "ok");
  }
}

INSTANTIATE_TEST_SUITE_P(Metadata, PowerLossVfsMetadataTest,
                         ::testing::Values(PowerLossVfs::Metadata::kOrdered,
                                           PowerLossVfs::Metadata::kStrictPosix),
                         [](const auto& info) {
                           return info.param == PowerLossVfs::Metadata::kOrdered ? "Ordered"
                                                                                  : "StrictPosix";
                         });

TEST(PowerLossVfsTest, RebootRefusesWhileAFileIsOpen) {
  testing::TempDir dir;
  auto registered = PowerLossVfs::Register("power-loss-vfs-open", 1);
  ASSERT_TRUE(registered);
  PowerLossVfs& vfs = *registered.value();
  auto db = SqliteDb::Open(dir.File("t.db"), false, vfs.name());
  ASSERT_TRUE(db);
  ASSERT_TRUE(db.value().Exec("CREATE TABLE t (k)"));
  auto rebooted = vfs.Reboot();
  ASSERT_FALSE(rebooted);
  EXPECT_EQ(rebooted.error().code(), Errc::kFailedPrecondition);
  EXPECT_FALSE(PowerLossVfs::Register("power-loss-vfs-open", 1));
}

}  // namespace
}  // namespace reckon::storage
