// The SQLite journal through simulated power cuts (docs/TESTING.md, "Power-loss storage").
//
// Each seed opens a fresh journal through a PowerLossVfs (storage/testing/power_loss_vfs.h;
// odd seeds with metadata ordered as on ext4, even seeds with strict POSIX directory syncs) in
// the production durability settings (WAL, synchronous = FULL, the integrity check at open)
// and runs a JournalWorkload (storage/testing/journal_workload.h) through many cuts. A cut is
// armed at a random mutating file call, so it lands anywhere: while the journal opens and
// recovers, inside a transaction, in a commit, in a checkpoint. After each cut the disk comes
// back with unsynced writes dropped or torn, the journal is reopened through its own open path,
// and the test checks that every acknowledged append is there exactly, that the transaction in
// flight is there whole or not at all, that PRAGMA integrity_check is ok (it reads every page
// through the checksum VFS, which sits on the PowerLossVfs: storage/sqlite/checksum_vfs.h, so
// every page SQLite can reach after the cut verifies), and that a new append works.
//
// Scale, from the environment: RECKON_POWER_LOSS_SEEDS seeds (default 6) of
// RECKON_POWER_LOSS_CUTS cuts each (default 50); RECKON_POWER_LOSS_SEED=N runs seed N alone.
// The heavy tier (ctest label `heavy`, storage/sqlite/CMakeLists.txt) runs 100 seeds.
//
// The mutants show that the check bites: with synchronous = OFF or NORMAL the journal
// acknowledges commits whose WAL frames were never synced, and a few cuts must catch it.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <set>
#include <string>

#include "reckon/storage/sqlite/journal_checksums.h"
#include "reckon/storage/sqlite/sqlite.h"
#include "reckon/storage/sqlite/sqlite_journal.h"
#include "reckon/storage/testing/journal_workload.h"
#include "reckon/storage/testing/power_loss_vfs.h"
#include "tests/support/temp_dir.h"

namespace reckon::storage {
namespace {

using Sync = SqliteJournalOptions::Sync;

std::int64_t FromEnv(const char* name, std::int64_t fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::atoll(value) : fallback;
}

struct PowerLossReport {
  int cuts = 0;
  int cuts_while_opening = 0;  // the power went off before the journal finished opening
  std::int64_t acknowledged = 0;
  std::int64_t adopted = 0;         // unacknowledged transactions found whole after the cut
  std::int64_t lost_in_flight = 0;  // unacknowledged transactions found absent
  PowerLossVfs::Stats vfs;
};

// The journal's production settings, with the tuning knobs drawn so that cuts also land in
// checkpoints (a small autocheckpoint) and in cache spills (a small page cache).
SqliteJournalOptions DrawOptions(std::mt19937_64& rng, Sync sync, const std::string& vfs) {
  SqliteJournalOptions options;
  options.sync = sync;
  options.vfs = vfs;
  static constexpr int kCheckpointPages[] = {4, 64, 8192};
  options.wal_autocheckpoint_pages = kCheckpointPages[rng() % 3];
  options.cache_kib = rng() % 2 == 0 ? 64 : 65536;
  return options;
}

Result<std::set<std::string>> OutboxIds(const std::string& path, const std::string& vfs) {
  RECKON_TRY(SqliteDb db, SqliteDb::Open(path, /*read_only=*/false, vfs));
  RECKON_TRY(Statement stmt, db.Prepare("SELECT message_id FROM outbox"));
  std::set<std::string> ids;
  for (;;) {
    RECKON_TRY(bool row, stmt.Step());
    if (!row) break;
    ids.insert(std::string(stmt.ColumnText(0)));
  }
  return ids;
}

// Runs the workload until the armed cut trips (or CutNow after a bounded number of steps),
// closing the journal after. Errors other than the cut's fail the test.
Result<void> RunUntilCut(const std::string& path, const SqliteJournalOptions& options,
                         PowerLossVfs& vfs, JournalWorkload& workload, PowerLossReport& report) {
  auto journal = SqliteJournal::Open(path, options);
  if (!journal) {
    if (!vfs.powered_off()) return journal.error().WithContext("opening before the cut");
    ++report.cuts_while_opening;
    return Ok();
  }
  for (int step = 0; step < 400 && !vfs.powered_off(); ++step) {
    auto stepped = workload.Step(*journal.value());
    if (!stepped && !vfs.powered_off()) return stepped.error().WithContext("append before the cut");
  }
  vfs.CutNow();
  return Ok();  // the journal closes in the dark: its checkpoint and WAL deletion fail
}

// After the reboot: the journal opens, holds what was acknowledged, passes integrity_check and
// takes a new append.
Result<void> CheckAfterReboot(const std::string& path, SqliteJournalOptions options,
                              PowerLossVfs& vfs, JournalWorkload& workload) {
  RECKON_TRY(auto journal, SqliteJournal::Open(path, options));
  {
    RECKON_TRY(SqliteDb db, SqliteDb::Open(path, /*read_only=*/false, vfs.name()));
    RECKON_TRY(bool sealed, HasPageChecksums(db));
    if (!sealed) return Err(Errc::kInternal, "the journal has no page checksums to exercise");
  }
  RECKON_TRY(auto outbox, OutboxIds(path, vfs.name()));
  RECKON_TRY(workload.Check(*journal, outbox));
  Result<std::string> integrity = journal->IntegrityCheck();
  if (!integrity) return integrity.error();
  if (integrity.value() != "ok") {
    return Err(Errc::kCorruption, "integrity_check: " + integrity.value());
  }
  if (auto stepped = workload.Step(*journal); !stepped) {
    return stepped.error().WithContext("the first append after recovery");
  }
  return Ok();
}

// One seed: `cuts` power cuts on a fresh journal. The error names the seed and the cut.
Result<PowerLossReport> RunPowerCuts(std::uint64_t seed, int cuts, Sync sync) {
  testing::TempDir dir;
  const std::string path = dir.File("journal.db");
  // Odd seeds: metadata in order (ext4, XFS); even seeds: strict POSIX (power_loss_vfs.h).
  const auto metadata =
      seed % 2 == 0 ? PowerLossVfs::Metadata::kStrictPosix : PowerLossVfs::Metadata::kOrdered;
  RECKON_TRY(std::unique_ptr<PowerLossVfs> vfs,
             PowerLossVfs::Register("power-loss-" + std::to_string(seed), seed, metadata));
  JournalWorkload workload(seed * 0x9E3779B97F4A7C15ull + 1);
  std::mt19937_64 rng(seed);
  PowerLossReport report;
  for (int cut = 0; cut < cuts; ++cut) {
    auto where = [&](const Error& e) {
      return e.WithContext("seed " + std::to_string(seed) + ", cut " + std::to_string(cut) +
                           " (rerun: RECKON_POWER_LOSS_SEED=" + std::to_string(seed) + ")");
    };
    const SqliteJournalOptions options = DrawOptions(rng, sync, vfs->name());
    vfs->ArmCut(rng() % 4 == 0 ? static_cast<std::int64_t>(rng() % 2000)
                               : static_cast<std::int64_t>(rng() % 150));
    if (auto ran = RunUntilCut(path, options, *vfs, workload, report); !ran) {
      return where(ran.error());
    }
    if (auto rebooted = vfs->Reboot(); !rebooted) return where(rebooted.error());
    if (auto checked = CheckAfterReboot(path, options, *vfs, workload); !checked) {
      return where(checked.error());
    }
    ++report.cuts;
  }
  report.acknowledged = workload.acknowledged();
  report.adopted = workload.adopted();
  report.lost_in_flight = workload.lost_in_flight();
  report.vfs = vfs->stats();
  return report;
}

std::vector<std::uint64_t> Seeds() {
  if (std::int64_t one = FromEnv("RECKON_POWER_LOSS_SEED", 0); one != 0) {
    return {static_cast<std::uint64_t>(one)};
  }
  std::vector<std::uint64_t> seeds;
  for (std::int64_t s = 1; s <= FromEnv("RECKON_POWER_LOSS_SEEDS", 6); ++s) seeds.push_back(s);
  return seeds;
}

TEST(JournalPowerLossTest, AcknowledgedAppendsSurviveEveryCut) {
  const int cuts = static_cast<int>(FromEnv("RECKON_POWER_LOSS_CUTS", 50));
  const auto started = std::chrono::steady_clock::now();
  PowerLossReport total;
  for (std::uint64_t seed : Seeds()) {
    auto report = RunPowerCuts(seed, cuts, Sync::kFull);
    ASSERT_TRUE(report) << report.error().ToString();
    total.cuts += report.value().cuts;
    total.cuts_while_opening += report.value().cuts_while_opening;
    total.acknowledged += report.value().acknowledged;
    total.adopted += report.value().adopted;
    total.lost_in_flight += report.value().lost_in_flight;
    total.vfs.mutating_calls += report.value().vfs.mutating_calls;
    total.vfs.syncs += report.value().vfs.syncs;
    total.vfs.pending_at_cuts += report.value().vfs.pending_at_cuts;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("power loss: %zu seeds, %d cuts (%d while opening), %lld acknowledged "
              "transactions, in flight at a cut: %lld found whole, %lld found absent; "
              "%lld mutating file calls, %lld syncs, %lld unsynced mutations at the cuts; %.1f s\n",
              Seeds().size(), total.cuts, total.cuts_while_opening,
              static_cast<long long>(total.acknowledged), static_cast<long long>(total.adopted),
              static_cast<long long>(total.lost_in_flight),
              static_cast<long long>(total.vfs.mutating_calls),
              static_cast<long long>(total.vfs.syncs),
              static_cast<long long>(total.vfs.pending_at_cuts), seconds);
}

// A journal that acknowledges commits it did not sync must be caught within a few cuts of the
// first seeds. Prints the cut that caught it.
void ExpectCaught(Sync sync, const char* what) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    auto report = RunPowerCuts(seed, 50, sync);
    ASSERT_FALSE(report) << what << ": seed " << seed << " ran 50 cuts without a violation";
    std::printf("%s caught: %s\n", what, report.error().ToString().c_str());
  }
}

TEST(JournalPowerLossTest, MutantSynchronousOffIsCaught) {
  ExpectCaught(Sync::kOff, "synchronous = OFF");
}

TEST(JournalPowerLossTest, MutantSynchronousNormalIsCaught) {
  ExpectCaught(Sync::kNormal, "synchronous = NORMAL");
}

}  // namespace
}  // namespace reckon::storage
