// The archive pass on real SQLite journal files: finished runs old enough go to an archive
// file and leave the journal; running runs, young runs and runs with an undelivered outbox
// message stay. Crash safety: deletions that fail after the file is durable (as a crash would
// leave them) leave the runs in both places, and the next pass archives them again into a new
// file, with the same events, and deletes them.
#include "reckon/storage/archive/archiver.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "reckon/storage/archive/archive_file.h"
#include "reckon/storage/event_codec.h"
#include "reckon/storage/sqlite/sqlite_journal.h"
#include "tests/support/temp_dir.h"

namespace reckon::storage {
namespace {

constexpr std::int64_t kHour = 3600LL * 1000 * 1000;

// The events as bytes: sequence, time and the encoded body of each.
std::vector<std::string> Bytes(const std::vector<Event>& events) {
  std::vector<std::string> out;
  for (const Event& e : events) {
    out.push_back(std::to_string(e.seq) + "@" + std::to_string(e.recorded_at_us) + ":" +
                  EncodeEventBody(e.body));
  }
  return out;
}

// Appends run `id` with a start and, unless `running`, an end, at `at_us`.
void AddRun(Journal& journal, const std::string& id, bool running, std::int64_t at_us) {
  AppendRequest start;
  start.run = {id, "r1"};
  start.now_us = at_us;
  start.workflow_type = "refund";
  start.events = {WorkflowStarted{"refund", "{\"id\":\"" + id + "\"}", ""},
                  MarkerRecorded{"now#1", "now", "123"}};
  ASSERT_TRUE(journal.Append(start));
  if (running) return;
  AppendRequest end;
  end.run = start.run;
  end.expected_next_seq = 3;
  end.now_us = at_us;
  end.events = {WorkflowCompleted{"{\"ok\":true}"}};
  end.status = RunStatus::kCompleted;
  ASSERT_TRUE(journal.Append(end));
}

// A journal whose DeleteRun fails (kUnavailable, as a lost commit) after `allowed` deletions:
// what a crash between the archive file and the deletions leaves behind.
class DeletesStop final : public Journal {
 public:
  DeletesStop(Journal& inner, int allowed) : inner_(inner), allowed_(allowed) {}
  using Journal::ListRuns;
  using Journal::ReadEvents;
  Result<AppendAck> Append(const AppendRequest& r) override { return inner_.Append(r); }
  std::vector<Result<AppendAck>> AppendGroup(std::span<const AppendRequest* const> r) override {
    return inner_.AppendGroup(r);
  }
  Result<std::optional<RunRow>> FindRun(const RunRef& r) override { return inner_.FindRun(r); }
  Result<std::optional<RunRow>> FindLatestRun(const std::string& id) override {
    return inner_.FindLatestRun(id);
  }
  Result<std::vector<RunRow>> ListRuns(std::optional<RunStatus> s) override {
    return inner_.ListRuns(s);
  }
  Result<std::vector<RunRow>> QueryRuns(const RunQuery& q) override { return inner_.QueryRuns(q); }
  Result<std::vector<Event>> ReadEvents(const RunRef& r, std::int64_t from) override {
    return inner_.ReadEvents(r, from);
  }
  Result<std::optional<OperationRow>> FindOperation(const std::string& id) override {
    return inner_.FindOperation(id);
  }
  Result<std::vector<OperationRow>> ListOperations(std::int64_t pk) override {
    return inner_.ListOperations(pk);
  }
  Result<std::string> IntegrityCheck() override { return inner_.IntegrityCheck(); }
  Result<std::vector<RunRow>> ListArchivable(std::int64_t before, std::size_t limit) override {
    return inner_.ListArchivable(before, limit);
  }
  Result<void> DeleteRun(const RunRef& run, std::int64_t next_seq) override {
    if (allowed_-- <= 0) return Err(Errc::kUnavailable, "the process died here");
    return inner_.DeleteRun(run, next_seq);
  }
  Result<void> PutContract(const ContractRow& row) override { return inner_.PutContract(row); }
  Result<std::vector<ContractRow>> ListContracts() override { return inner_.ListContracts(); }
  int schema_version() const override { return inner_.schema_version(); }
  const std::string& path() const override { return inner_.path(); }

 private:
  Journal& inner_;
  int allowed_;
};

class ArchiverTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }
  void Open() {
    journal_.reset();
    auto opened = OpenSqliteJournal(dir_.File("journal.db"));
    ASSERT_TRUE(opened) << opened.error().ToString();
    journal_ = std::move(opened).value();
  }
  ArchivePassOptions Options(const std::string& file) {
    ArchivePassOptions options;
    options.now_us = 100 * kHour;
    options.older_than_us = 24 * kHour;
    options.out = dir_.File(file);
    return options;
  }
  std::vector<std::string> JournalIds() {
    std::vector<std::string> ids;
    auto rows = journal_->ListRuns();
    EXPECT_TRUE(rows) << rows.error().ToString();
    if (!rows) return ids;
    for (const RunRow& row : rows.value()) ids.push_back(row.ref.workflow_id);
    return ids;
  }

  testing::TempDir dir_;
  std::unique_ptr<Journal> journal_;
};

TEST_F(ArchiverTest, MovesOldFinishedRunsIntoAnArchiveAndOutOfTheJournal) {
  AddRun(*journal_, "old-1", false, 10 * kHour);
  AddRun(*journal_, "old-2", false, 20 * kHour);
  AddRun(*journal_, "old-running", true, 10 * kHour);
  AddRun(*journal_, "young", false, 90 * kHour);
  const auto before = journal_->ReadEvents({"old-1", "r1"}).value();

  auto pass = ArchiveFinishedRuns(*journal_, Options("a1.jsonl.gz"));
  ASSERT_TRUE(pass) << pass.error().ToString();
  EXPECT_EQ(pass.value().archived.size(), 2u);
  EXPECT_EQ(JournalIds(), (std::vector<std::string>{"old-running", "young"}));
  EXPECT_EQ(journal_->IntegrityCheck().value(), "ok");

  auto read = ReadArchive(pass.value().file);
  ASSERT_TRUE(read) << read.error().ToString();
  EXPECT_EQ(read.value().header.version, kArchiveFormatVersion);
  EXPECT_EQ(read.value().header.journal, journal_->path());
  EXPECT_EQ(read.value().header.updated_before_us, 76 * kHour);
  ASSERT_EQ(read.value().runs.size(), 2u);
  const ArchivedRun& first = read.value().runs[0];
  EXPECT_EQ(first.row.ref.workflow_id, "old-1");
  EXPECT_EQ(first.row.status, RunStatus::kCompleted);
  EXPECT_EQ(first.row.workflow_type, "refund");
  EXPECT_EQ(Bytes(first.events), Bytes(before));
  EXPECT_FALSE(std::filesystem::exists(pass.value().file + ".partial"));

  // Nothing left to archive: no file.
  auto empty = ArchiveFinishedRuns(*journal_, Options("a2.jsonl.gz"));
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty.value().file.empty());
  EXPECT_FALSE(std::filesystem::exists(dir_.File("a2.jsonl.gz")));
}

TEST_F(ArchiverTest, ACrashAfterTheFileLeavesRunsInBothAndTheNextPassArchivesThemAgain) {
  for (int i = 0; i < 5; ++i) AddRun(*journal_, "run-" + std::to_string(i), false, kHour);
  {
    DeletesStop dying(*journal_, 2);
    auto pass = ArchiveFinishedRuns(dying, Options("first.jsonl.gz"));
    ASSERT_FALSE(pass);
    EXPECT_EQ(pass.error().code(), Errc::kUnavailable);
  }
  Open();  // the next life of the process
  EXPECT_EQ(JournalIds().size(), 3u);
  auto first = ReadArchive(dir_.File("first.jsonl.gz"));
  ASSERT_TRUE(first) << first.error().ToString();
  EXPECT_EQ(first.value().runs.size(), 5u) << "the file was complete before any deletion";

  auto again = ArchiveFinishedRuns(*journal_, Options("second.jsonl.gz"));
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(again.value().archived.size(), 3u);
  EXPECT_TRUE(JournalIds().empty());
  auto second = ReadArchive(dir_.File("second.jsonl.gz"));
  ASSERT_TRUE(second);
  // Every run is archived; the ones archived twice have the same events in both files.
  std::map<std::string, std::vector<std::string>> by_id;
  for (const ArchivedRun& run : first.value().runs) {
    by_id[run.row.ref.workflow_id] = Bytes(run.events);
  }
  for (const ArchivedRun& run : second.value().runs) {
    ASSERT_TRUE(by_id.count(run.row.ref.workflow_id));
    EXPECT_EQ(by_id[run.row.ref.workflow_id], Bytes(run.events));
  }
  EXPECT_EQ(by_id.size(), 5u);
}

TEST_F(ArchiverTest, AnExistingFileIsNeverOverwrittenAndNothingIsDeleted) {
  AddRun(*journal_, "old", false, kHour);
  { std::ofstream(dir_.File("taken.jsonl.gz")) << "not mine"; }
  auto pass = ArchiveFinishedRuns(*journal_, Options("taken.jsonl.gz"));
  ASSERT_FALSE(pass);
  EXPECT_EQ(pass.error().code(), Errc::kAlreadyExists);
  EXPECT_EQ(JournalIds().size(), 1u);
}

TEST_F(ArchiverTest, AnIncompleteArchiveIsRefused) {
  AddRun(*journal_, "old", false, kHour);
  auto pass = ArchiveFinishedRuns(*journal_, Options("whole.jsonl.gz"));
  ASSERT_TRUE(pass);
  const auto size = std::filesystem::file_size(pass.value().file);
  std::filesystem::copy_file(pass.value().file, dir_.File("cut.jsonl.gz"));
  std::filesystem::resize_file(dir_.File("cut.jsonl.gz"), size - 6);
  auto cut = ReadArchive(dir_.File("cut.jsonl.gz"));
  ASSERT_FALSE(cut);
  EXPECT_EQ(cut.error().code(), Errc::kCorruption) << cut.error().ToString();
  auto missing = ReadArchive(dir_.File("none.jsonl.gz"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), Errc::kNotFound);
}

}  // namespace
}  // namespace reckon::storage
