// Retention under steady load, through the real binaries: `reckon server --retention 1s` with a
// real worker, waves of workflows started with the CLI, each wave finished and then archived
// and deleted by the server's background passes. After every wave the test records the
// journal's size on disk and the server's RSS; it checks that the journal holds no finished
// run once retention caught up, that the journal's file stops growing (freed pages are
// reused), and that every run started is in an archive, whole, once (or twice after the
// SIGKILL of the server in the middle: the same events both times). The figures are printed;
// docs/PERFORMANCE.md ("Retention") reports a heavy run.
//
// Default tier: 4 waves of 12 runs. Heavy tier (label heavy): RECKON_SOAK_WAVES waves of
// RECKON_SOAK_RUNS runs.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "reckon/storage/archive/archive_file.h"
#include "reckon/storage/event_codec.h"
#include "reckon/storage/sqlite/sqlite.h"
#include "reckon/storage/sqlite/sqlite_journal.h"
#include "tests/support/reckon_server.h"

namespace reckon {
namespace {

using namespace reckon::testing;
namespace fs = std::filesystem;

int EnvInt(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::atoi(value) : fallback;
}

long RssKiB(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    long kib = 0;
    if (std::sscanf(line.c_str(), "VmRSS: %ld kB", &kib) == 1) return kib;
  }
  return 0;
}

std::uintmax_t SizeOf(const std::string& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  return ec ? 0 : size;
}

// Runs in the journal, read by a read-only connection of the test's own; -1 if unreadable.
int RunsInJournal(const std::string& path) {
  storage::SqliteJournalOptions options;
  options.mode = storage::SqliteJournalOptions::Mode::kReadOnly;
  auto journal = storage::OpenSqliteJournal(path, options);
  if (!journal) return -1;
  auto runs = journal.value()->ListRuns();
  return runs ? static_cast<int>(runs.value().size()) : -1;
}

// The database's size in pages as a checkpoint leaves the file (its WAL included), and its
// free pages; {-1, -1} if unreadable.
std::pair<std::int64_t, std::int64_t> Pages(const std::string& path) {
  auto db = storage::SqliteDb::Open(path, /*read_only=*/true);
  if (!db) return {-1, -1};
  auto pages = db.value().QueryInt("PRAGMA page_count");
  auto free = db.value().QueryInt("PRAGMA freelist_count");
  return {pages ? pages.value() : -1, free ? free.value() : -1};
}

TEST(RetentionSoakTest, TheJournalStopsGrowingAndEveryRunIsArchived) {
  const int waves = EnvInt("RECKON_SOAK_WAVES", 4);
  const int per_wave = EnvInt("RECKON_SOAK_RUNS", 12);
  auto started = ReckonServer::Start(
      RECKON_CLI_PATH, {"--retention", "1s", "--retention-every", "200ms", "--quiet"});
  ASSERT_TRUE(started) << started.error().ToString();
  ReckonServer& server = *started.value();
  ASSERT_TRUE(server.StartWorker(RECKON_TEST_WORKER, "worker"));
  const std::string journal = server.journal_path();
  const std::string archives = journal + ".archive";

  std::vector<std::int64_t> sizes;  // pages
  for (int wave = 0; wave < waves; ++wave) {
    if (wave == waves / 2) {
      // A crash of the server between passes, or inside one: nothing may be lost.
      ASSERT_TRUE(server.KillServer());
      ASSERT_TRUE(server.RestartServer());
    }
    for (int i = 0; i < per_wave; ++i) {
      const std::string id = "soak-" + std::to_string(wave) + "-" + std::to_string(i);
      const CliRun run = server.StartWorkflow(
          id, "call_once",
          R"({"tool":"charge","input":{"account":"a","amount_cents":)" + std::to_string(i + 1) +
              "}}");
      ASSERT_EQ(run.code(), 0) << run.Describe();
    }
    // Every run of the wave finishes, and the retention passes take it out of the journal.
    ASSERT_TRUE(Eventually([&] { return RunsInJournal(journal) == 0; }, std::chrono::seconds(60)))
        << RunsInJournal(journal) << " run(s) still in the journal after wave " << wave;
    const auto [pages, free] = Pages(journal);
    sizes.push_back(pages);
    std::printf("wave %d: %d runs started in all, journal %lld pages (%lld free); files: db %ju "
                "KiB, wal %ju KiB; server RSS %ld KiB\n",
                wave + 1, (wave + 1) * per_wave, static_cast<long long>(pages),
                static_cast<long long>(free), SizeOf(journal) / 1024,
                SizeOf(journal + "-wal") / 1024, RssKiB(server.server_pid()));
  }
  ASSERT_TRUE(server.Stop());

  // The journal stops growing: once the first waves made it as large as a wave needs, later
  // waves reuse the pages that retention freed. (The -wal file grows up to the checkpoint
  // interval, SqliteJournalOptions::wal_autocheckpoint_pages, and is then reused.)
  if (waves >= 4) {
    EXPECT_LE(sizes.back(), sizes[1] + sizes[1] / 4)
        << "journal grew from " << sizes[1] << " to " << sizes.back() << " pages";
  }

  // Every run is archived, completed and whole; a run archived twice has the same events.
  std::map<std::string, std::string> archived;  // workflow id -> its events' bytes
  int files = 0;
  for (const auto& entry : fs::directory_iterator(archives)) {
    if (entry.path().extension() != ".gz") continue;
    ++files;
    auto read = storage::ReadArchive(entry.path().string());
    ASSERT_TRUE(read) << read.error().ToString();
    for (const storage::ArchivedRun& run : read.value().runs) {
      EXPECT_EQ(run.row.status, storage::RunStatus::kCompleted) << run.row.ref.workflow_id;
      EXPECT_EQ(static_cast<std::int64_t>(run.events.size()), run.row.next_seq - 1);
      std::string bytes;
      for (const storage::Event& e : run.events) bytes += storage::EncodeEventBody(e.body);
      auto [it, fresh] = archived.emplace(run.row.ref.workflow_id, bytes);
      if (!fresh) {
        EXPECT_EQ(it->second, bytes) << run.row.ref.workflow_id << " differs";
      }
    }
  }
  EXPECT_EQ(archived.size(), static_cast<std::size_t>(waves * per_wave));
  std::printf("%d archive file(s), %zu distinct runs\n", files, archived.size());
}

}  // namespace
}  // namespace reckon
