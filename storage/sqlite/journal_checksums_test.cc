// Page checksums on real journal files (storage/sqlite/checksum_vfs.h, journal_checksums.h):
// a byte changed inside a row, in the main file or in the -wal, by a disk or by a writer that
// bypasses Reckon, stops the reads that meet it and is named by `reckon admin check`'s
// CheckJournal; SQLite's own recovery still accepts the -wal the shim wrote; journals written
// without checksums keep working, unverified, until VacuumJournal rewrites them; BackupJournal
// copies a journal beside its owner with every page sealed, where SQLite's own backup leaves the
// header page unsealed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "reckon/storage/sqlite/journal_check.h"
#include "reckon/storage/sqlite/journal_checksums.h"
#include "reckon/storage/sqlite/journal_rewrite.h"
#include "reckon/storage/sqlite/sqlite.h"
#include "reckon/storage/sqlite/sqlite_journal.h"
#include "reckon/storage/testing/journal_requests.h"
#include "tests/support/file_damage.h"
#include "tests/support/temp_dir.h"

namespace reckon::storage {
namespace {

namespace fs = std::filesystem;
using Sync = SqliteJournalOptions::Sync;

// Values the tests damage: long enough to be found once in the file.
constexpr char kApprovalHash[] = "intent-hash-of-the-approval-that-the-test-damages";
constexpr char kEventValue[] = "value-of-the-event-that-the-test-damages-0123456789";
const RunRef kTarget{"wf-target", "r1"};

AppendRequest TargetRun() {
  AppendRequest request;
  request.run = kTarget;
  request.expected_next_seq = 1;
  request.now_us = 5;
  request.workflow_type = "refund";
  request.events = {MarkerRecorded{"m1", "note", std::string("\"") + kEventValue + "\""}};
  request.approvals = {ApprovalRow{"approval-target", "op-target", kApprovalHash,
                                   ApprovalState::kRequested, "", 0}};
  return request;
}

SqliteJournalOptions Options(bool checksums) {
  SqliteJournalOptions options;
  options.sync = Sync::kOff;
  options.page_checksums = checksums;
  return options;
}

// A closed journal (its -wal checkpointed into the file): 30 runs, then the target run.
void WriteJournal(const std::string& path, bool checksums) {
  auto journal = OpenSqliteJournal(path, Options(checksums));
  ASSERT_TRUE(journal) << journal.error().ToString();
  ASSERT_TRUE(FillRuns(*journal.value(), 30));
  auto appended = journal.value()->Append(TargetRun());
  ASSERT_TRUE(appended) << appended.error().ToString();
}

int ReservedBytesInHeader(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  char header[100] = {};
  file.read(header, sizeof header);
  return static_cast<unsigned char>(header[20]);
}

bool Mentions(const std::vector<std::string>& lines, const std::string& text) {
  for (const std::string& line : lines) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

std::string Joined(const std::vector<std::string>& lines) {
  std::string all;
  for (const std::string& line : lines) all += line + "\n";
  return all;
}

TEST(JournalChecksumsTest, ANewJournalCarriesThemAndTheCheckVerifiesEveryPage) {
  testing::TempDir dir;
  const std::string path = dir.File("j.db");
  WriteJournal(path, true);
  EXPECT_EQ(ReservedBytesInHeader(path), 8);
  auto report = CheckJournal(path);
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_TRUE(report.value().ok()) << Joined(report.value().problems);
  EXPECT_EQ(report.value().page_checksums, "on");
  EXPECT_EQ(report.value().pages_verified, static_cast<std::int64_t>(fs::file_size(path) / 4096));
  EXPECT_TRUE(report.value().warnings.empty()) << Joined(report.value().warnings);
  auto journal = OpenSqliteJournal(path, Options(true));
  ASSERT_TRUE(journal) << journal.error().ToString();
  EXPECT_EQ(journal.value()->integrity_warning(), "");
}

// The defect, on a journal written the old way: one byte of a row changes and nothing notices.
// It also shows that FlipByteInside leaves the page's structure intact.
TEST(JournalChecksumsTest, WithoutThemAChangedByteInARowGoesUnnoticed) {
  testing::TempDir dir;
  const std::string path = dir.File("j.db");
  WriteJournal(path, false);
  ASSERT_TRUE(testing::FlipByteInside(path, kApprovalHash));
  ASSERT_TRUE(testing::FlipByteInside(path, kEventValue));
  auto report = CheckJournal(path);
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_TRUE(report.value().ok()) << Joined(report.value().problems);
  EXPECT_EQ(report.value().page_checksums, "off");
  EXPECT_TRUE(Mentions(report.value().warnings, "reckon admin vacuum " + path));

  auto journal = OpenSqliteJournal(path, Options(false));  // quick_check passes
  ASSERT_TRUE(journal) << journal.error().ToString();
  auto events = journal.value()->ReadEvents(kTarget);
  ASSERT_TRUE(events) << events.error().ToString();
  ASSERT_EQ(events.value().size(), 1u);
  const auto& marker = std::get<MarkerRecorded>(events.value()[0].body);
  EXPECT_NE(marker.value_json, std::string("\"") + kEventValue + "\"") << "read back changed";
}

TEST(JournalChecksumsTest, AChangedByteInAnApprovalRowStopsTheOwnerAndTheCheckNamesTheTable) {
  testing::TempDir dir;
  const std::string path = dir.File("j.db");
  WriteJournal(path, true);
  auto offset = testing::FlipByteInside(path, kApprovalHash);
  ASSERT_TRUE(offset) << offset.error().ToString();
  const std::string page = "page " + std::to_string(offset.value() / 4096 + 1) + " ";

  auto journal = OpenSqliteJournal(path, Options(true));
  ASSERT_FALSE(journal) << "an owner opened a journal with a damaged row";
  EXPECT_EQ(journal.error().code(), Errc::kCorruption) << journal.error().ToString();
  const std::string message = journal.error().message();
  EXPECT_NE(message.find("journal '" + path + "' is damaged"), std::string::npos) << message;
  EXPECT_NE(message.find(page + "(in '" + path + "') fails its checksum"), std::string::npos)
      << message;

  auto report = CheckJournal(path);
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_FALSE(report.value().ok());
  EXPECT_TRUE(Mentions(report.value().problems,
                       "table or index 'approvals': " + page + "(in '" + path + "')"))
      << Joined(report.value().problems);
}

TEST(JournalChecksumsTest, AChangedByteInAnEventFailsTheReadThatMeetsIt) {
  testing::TempDir dir;
  const std::string path = dir.File("j.db");
  WriteJournal(path, true);
  auto offset = testing::FlipByteInside(path, kEventValue);
  ASSERT_TRUE(offset) << offset.error().ToString();
  SqliteJournalOptions options = Options(true);
  options.check_at_open = false;  // as if the damage came after the open
  auto journal = OpenSqliteJournal(path, options);
  ASSERT_TRUE(journal) << journal.error().ToString();
  auto events = journal.value()->ReadEvents(kTarget);
  ASSERT_FALSE(events) << "read a damaged event";
  EXPECT_EQ(events.error().code(), Errc::kCorruption) << events.error().ToString();
  EXPECT_NE(events.error().message().find("page " + std::to_string(offset.value() / 4096 + 1) +
                                          " (in '" + path + "') fails its checksum"),
            std::string::npos)
      << events.error().message();
  auto other = journal.value()->ReadEvents({"wf-3", "r1"});
  EXPECT_TRUE(other) << "a sound page still reads: " << other.error().ToString();
}

TEST(JournalChecksumsTest, DamageInTheWalIsFoundBeforeACheckpointCopiesIt) {
  testing::TempDir dir;
  const std::string path = dir.File("j.db");
  SqliteJournalOptions options = Options(true);
  options.wal_autocheckpoint_pages = 100000;
  auto owner = OpenSqliteJournal(path, options);
  ASSERT_TRUE(owner) << owner.error().ToString();
  ASSERT_TRUE(FillRuns(*owner.value(), 5));
  ASSERT_TRUE(owner.value()->Append(TargetRun()));
  auto offset = testing::FlipByteInside(path + "-wal", kEventValue);
  ASSERT_TRUE(offset) << offset.error().ToString();

  SqliteJournalOptions reader_options = options;
  reader_options.mode = SqliteJournalOptions::Mode::kReadOnly;
  auto reader = OpenSqliteJournal(path, reader_options);
  ASSERT_TRUE(reader) << reader.error().ToString();
  auto events = reader.value()->ReadEvents(kTarget);
  ASSERT_FALSE(events) << "read a damaged event from the -wal";
  EXPECT_EQ(events.error().code(), Errc::kCorruption);
  EXPECT_NE(events.error().message().find("of '" + path + "-wal') fails its checksum"),
            std::string::npos)
      << events.error().message();

  auto report = CheckJournal(path);
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_TRUE(Mentions(report.value().problems, "table or index 'events': page "))
      << Joined(report.value().problems);
  EXPECT_TRUE(Mentions(report.value().problems, "of '" + path + "-wal')"))
      << Joined(report.value().problems);
}

// The shim rewrites SQLite's frame checksums after sealing each page: a crash image of the files
// (the -wal never checkpointed) must come back whole through SQLite's own recovery.
TEST(JournalChecksumsTest, SqliteRecoversTheWalTheShimWrote) {
  testing::TempDir dir;
  const std::string path = dir.File("j.db");
  SqliteJournalOptions options = Options(true);
  options.wal_autocheckpoint_pages = 100000;
  auto owner = OpenSqliteJournal(path, options);
  ASSERT_TRUE(owner) << owner.error().ToString();
  ASSERT_TRUE(FillRuns(*owner.value(), 40));
  ASSERT_TRUE(owner.value()->Append(TargetRun()));
  const std::string copy = dir.File("copy.db");
  fs::copy_file(path, copy);
  fs::copy_file(path + "-wal", copy + "-wal");  // no -shm: SQLite rebuilds it by recovery

  auto report = CheckJournal(copy);
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_TRUE(report.value().ok()) << Joined(report.value().problems);
  EXPECT_EQ(report.value().page_checksums, "on");
  EXPECT_GT(report.value().wal_frames_verified, 40);
  auto recovered = OpenSqliteJournal(copy, Options(true));
  ASSERT_TRUE(recovered) << recovered.error().ToString();
  auto runs = recovered.value()->ListRuns(std::nullopt);
  ASSERT_TRUE(runs) << runs.error().ToString();
  EXPECT_EQ(runs.value().size(), 41u) << "recovery dropped frames whose checksums it rejected";
}

TEST(JournalChecksumsTest, TheyOutliveCheckpointsAndReopens) {
  testing::TempDir dir;
  const std::string path = dir.File("j.db");
  SqliteJournalOptions options = Options(true);
  options.wal_autocheckpoint_pages = 4;  // a checkpoint every few commits
  for (int round = 0; round < 3; ++round) {
    auto journal = OpenSqliteJournal(path, options);
    ASSERT_TRUE(journal) << journal.error().ToString();
    for (int i = 0; i < 40; ++i) {
      const std::string id = "wf-" + std::to_string(round) + "-" + std::to_string(i);
      ASSERT_TRUE(journal.value()->Append(MarkerStep(id, 1)));
      ASSERT_TRUE(journal.value()->Append(MarkerStep(id, 2)));
    }
    auto report = CheckJournal(path);  // beside the owner
    ASSERT_TRUE(report) << report.error().ToString();
    EXPECT_TRUE(report.value().ok()) << Joined(report.value().problems);
    EXPECT_EQ(report.value().page_checksums, "on");
  }
  auto report = CheckJournal(path);
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_TRUE(report.value().ok()) << Joined(report.value().problems);
  EXPECT_EQ(report.value().runs, 120);
}

// What the attacker did with a SQLite client: a row changed by a writer that does not
// go through Reckon keeps a stale checksum.
TEST(JournalChecksumsTest, AWriteThatBypassesReckonIsCaught) {
  testing::TempDir dir;
  const std::string path = dir.File("j.db");
  WriteJournal(path, true);
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE, "unix"), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(raw,
                         "UPDATE approvals SET state = 'granted', decided_by = 'mallory' "
                         "WHERE approval_id = 'approval-target'",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);

  auto journal = OpenSqliteJournal(path, Options(true));
  ASSERT_FALSE(journal) << "an owner opened a journal changed behind its back";
  EXPECT_EQ(journal.error().code(), Errc::kCorruption) << journal.error().ToString();
  EXPECT_NE(journal.error().message().find("fails its checksum"), std::string::npos)
      << journal.error().message();
}

TEST(JournalChecksumsTest, AnOldJournalOpensWithAWarningAndKeepsItsFormat) {
  testing::TempDir dir;
  const std::string path = dir.File("j.db");
  WriteJournal(path, false);
  EXPECT_EQ(ReservedBytesInHeader(path), 0);
  {
    auto journal = OpenSqliteJournal(path, Options(true));
    ASSERT_TRUE(journal) << journal.error().ToString();
    EXPECT_NE(journal.value()->integrity_warning().find("reckon admin vacuum " + path),
              std::string::npos)
        << journal.value()->integrity_warning();
    ASSERT_TRUE(journal.value()->Append(MarkerStep("wf-late", 1)));
  }
  EXPECT_EQ(ReservedBytesInHeader(path), 0);
  auto report = CheckJournal(path);
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_TRUE(report.value().ok()) << Joined(report.value().problems);
  EXPECT_EQ(report.value().runs, 32);
}

TEST(JournalChecksumsTest, VacuumGivesAnOldJournalChecksumsAndKeepsEverything) {
  testing::TempDir dir;
  const std::string path = dir.File("j.db");
  WriteJournal(path, false);
  std::vector<Event> before;
  {
    auto journal = OpenSqliteJournal(path, Options(false));
    ASSERT_TRUE(journal) << journal.error().ToString();
    auto events = journal.value()->ReadEvents({"wf-7", "r1"});
    ASSERT_TRUE(events) << events.error().ToString();
    before = events.value();
  }
  {
    auto db = SqliteDb::Open(path);  // as an older release left it: schema version 5
    ASSERT_TRUE(db) << db.error().ToString();
    ASSERT_TRUE(db.value().Exec("PRAGMA user_version = 5"));
  }
  auto enabled = VacuumJournal(path);
  ASSERT_TRUE(enabled) << enabled.error().ToString();
  EXPECT_FALSE(enabled.value().page_checksums_before);
  EXPECT_GT(enabled.value().pages, 0);
  EXPECT_EQ(ReservedBytesInHeader(path), 8);
  EXPECT_FALSE(fs::exists(path + "-wal") && fs::file_size(path + "-wal") > 0);
  {
    auto db = SqliteDb::Open(path, /*read_only=*/true);
    ASSERT_TRUE(db) << db.error().ToString();
    auto version = db.value().QueryInt("PRAGMA user_version");
    ASSERT_TRUE(version);
    EXPECT_EQ(version.value(), 6) << "a release without checksums must refuse the file";
  }

  auto report = CheckJournal(path);
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_TRUE(report.value().ok()) << Joined(report.value().problems);
  EXPECT_EQ(report.value().page_checksums, "on");
  EXPECT_EQ(report.value().runs, 31);
  {
    auto journal = OpenSqliteJournal(path, Options(true));
    ASSERT_TRUE(journal) << journal.error().ToString();
    EXPECT_EQ(journal.value()->integrity_warning(), "");
    auto events = journal.value()->ReadEvents({"wf-7", "r1"});
    ASSERT_TRUE(events) << events.error().ToString();
    ASSERT_EQ(events.value().size(), before.size());
    for (std::size_t i = 0; i < before.size(); ++i) {
      EXPECT_EQ(events.value()[i].seq, before[i].seq);
      EXPECT_EQ(std::get<WorkflowStarted>(events.value()[i].body).input_json,
                std::get<WorkflowStarted>(before[i].body).input_json);
    }
    ASSERT_TRUE(journal.value()->Append(MarkerStep("wf-after", 1)));
  }
  auto again = VacuumJournal(path);  // a journal with checksums: VACUUM, verified
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_TRUE(again.value().page_checksums_before);

  ASSERT_TRUE(testing::FlipByteInside(path, kApprovalHash));
  auto damaged = OpenSqliteJournal(path, Options(true));
  ASSERT_FALSE(damaged);
  EXPECT_EQ(damaged.error().code(), Errc::kCorruption) << damaged.error().ToString();
}

TEST(JournalChecksumsTest, VacuumWaitsForTheOwnerToStop) {
  testing::TempDir dir;
  const std::string path = dir.File("j.db");
  WriteJournal(path, false);
  auto owner = OpenSqliteJournal(path, Options(false));
  ASSERT_TRUE(owner) << owner.error().ToString();
  auto enabled = VacuumJournal(path);
  ASSERT_FALSE(enabled);
  EXPECT_EQ(enabled.error().code(), Errc::kFailedPrecondition) << enabled.error().ToString();
  EXPECT_EQ(ReservedBytesInHeader(path), 0);
}

TEST(JournalChecksumsTest, AVacuumRefusesADamagedJournal) {
  testing::TempDir dir;
  const std::string path = dir.File("j.db");
  WriteJournal(path, true);
  ASSERT_TRUE(testing::FlipByteInside(path, kEventValue));
  auto vacuumed = VacuumJournal(path);
  ASSERT_FALSE(vacuumed) << "a VACUUM would have sealed the damage into a fresh page";
  EXPECT_EQ(vacuumed.error().code(), Errc::kCorruption) << vacuumed.error().ToString();
}

// The backup an operator takes beside the running owner: what SQLite's own backup (the
// `sqlite3` shell's .backup) writes fails the check, Reckon's passes and holds everything.
TEST(JournalChecksumsTest, ABackupBesideTheOwnerIsSealedWhereSqlitesIsNot) {
  testing::TempDir dir;
  const std::string path = dir.File("j.db");
  SqliteJournalOptions options = Options(true);
  options.wal_autocheckpoint_pages = 100000;  // the last commits are in the -wal only
  auto owner = OpenSqliteJournal(path, options);
  ASSERT_TRUE(owner) << owner.error().ToString();
  ASSERT_TRUE(FillRuns(*owner.value(), 30));
  ASSERT_TRUE(owner.value()->Append(TargetRun()));

  const std::string ours = dir.File("ours.db");
  auto backup = BackupJournal(path, ours);
  ASSERT_TRUE(backup) << backup.error().ToString();
  EXPECT_TRUE(backup.value().page_checksums_before);
  auto report = CheckJournal(ours);
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_TRUE(report.value().ok()) << Joined(report.value().problems);
  EXPECT_EQ(report.value().page_checksums, "on");
  EXPECT_EQ(report.value().runs, 31);
  EXPECT_EQ(report.value().pages_verified, backup.value().pages);
  auto again = BackupJournal(path, ours);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), Errc::kAlreadyExists);

  const std::string theirs = dir.File("theirs.db");
  sqlite3* from = nullptr;
  sqlite3* to = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &from, SQLITE_OPEN_READONLY, "unix"), SQLITE_OK);
  ASSERT_EQ(sqlite3_open_v2(theirs.c_str(), &to, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                            "unix"),
            SQLITE_OK);
  sqlite3_backup* copy = sqlite3_backup_init(to, "main", from, "main");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(sqlite3_backup_step(copy, -1), SQLITE_DONE);
  EXPECT_EQ(sqlite3_backup_finish(copy), SQLITE_OK);
  sqlite3_close(to);
  sqlite3_close(from);
  auto their_report = CheckJournal(theirs);
  ASSERT_TRUE(their_report) << their_report.error().ToString();
  EXPECT_FALSE(their_report.value().ok()) << "SQLite's backup rewrites the header page unsealed";
}

}  // namespace
}  // namespace reckon::storage
