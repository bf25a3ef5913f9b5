// journal_open_bench: what the integrity check costs an owner at open, on a big journal.
//
// Builds (or reuses, with --keep) a journal of about --mb MiB of engine-like transitions
// (two events with a JSON payload and one operation row each, over many runs), then times:
//   open without check     Journal::Open in owner mode with check_at_open = false
//   open with quick_check  the default owner open (PRAGMA quick_check first)
//   admin check            the full PRAGMA integrity_check plus counts (reckon admin check)
// each with the file's pages evicted from the OS cache first (cold: posix_fadvise DONTNEED)
// and again right after (warm). The fsync floor of the directory is printed for reference.
// Usage: journal_open_bench [--dir DIR] [--mb N] [--keep]
#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>

#include "bench/fsync_floor.h"
#include "bench/machine.h"
#include "bench/refund_transition.h"
#include "reckon/storage/sqlite/sqlite_journal.h"
#include "reckon/storage/sqlite/journal_check.h"

namespace {

using namespace reckon::storage;
using Clock = std::chrono::steady_clock;

using reckon::bench::RefundTransition;

void Build(const std::string& path, std::uint64_t target_bytes) {
  SqliteJournalOptions options;
  options.sync = SqliteJournalOptions::Sync::kOff;
  auto journal = std::move(SqliteJournal::Open(path, options)).value();
  constexpr int kRuns = 20000, kBatch = 2000;
  std::vector<std::int64_t> next(kRuns, 1);
  auto start = Clock::now();
  std::int64_t appends = 0;
  int run = 0;
  while (std::filesystem::file_size(path) + std::filesystem::file_size(path + "-wal") <
         target_bytes) {
    std::vector<AppendRequest> batch;
    for (int i = 0; i < kBatch; ++i, run = (run + 1) % kRuns) batch.push_back(RefundTransition(run, next[run]));
    std::vector<const AppendRequest*> pointers;
    for (const AppendRequest& r : batch) pointers.push_back(&r);
    auto results = journal->AppendGroup(pointers);
    for (std::size_t i = 0; i < results.size(); ++i) {
      if (!results[i]) {
        std::fprintf(stderr, "%s\n", results[i].error().ToString().c_str());
        std::exit(1);
      }
      next[std::stoi(batch[i].run.workflow_id.substr(7))] = results[i].value().next_seq;
    }
    appends += kBatch;
  }
  std::printf("built %s: %lld appends (%lld events) in %.1f s\n", path.c_str(),
              static_cast<long long>(appends), static_cast<long long>(2 * appends),
              std::chrono::duration<double>(Clock::now() - start).count());
}

void Evict(const std::string& path) {
  for (const std::string& file : {path, path + "-wal"}) {
    int fd = open(file.c_str(), O_RDONLY);
    if (fd < 0) continue;
    fdatasync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
  }
}

double Seconds(const std::function<void()>& work) {
  auto start = Clock::now();
  work();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void OpenOnce(const std::string& path, bool check) {
  SqliteJournalOptions options;
  options.check_at_open = check;
  auto journal = SqliteJournal::Open(path, options);
  if (!journal) {
    std::fprintf(stderr, "%s\n", journal.error().ToString().c_str());
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"journal_open_bench: the cost of the integrity check at open"};
  std::string dir = std::filesystem::current_path().string();
  std::uint64_t mb = 1024;
  bool keep = false;
  app.add_option("--dir", dir, "directory for the journal (use the disk you care about)");
  app.add_option("--mb", mb, "size of the journal to build, MiB");
  app.add_flag("--keep", keep, "reuse the journal if present, and leave it afterwards");
  CLI11_PARSE(app, argc, argv);
  const std::string path = dir + "/journal_open_bench.db";
  std::printf("%s\n", reckon::bench::DescribeMachine(dir).c_str());
  auto floor = reckon::bench::MeasureFsyncFloor(dir, 1000);
  std::printf("floor: 4 KiB write + fdatasync: mean %.1f us, p50 %.1f us, p99 %.1f us\n",
              floor.mean_us, floor.p50_us, floor.p99_us);
  if (!keep || !std::filesystem::exists(path)) {
    for (const char* suffix : {"", "-wal", "-shm", ".lock"}) std::filesystem::remove(path + suffix);
    Build(path, mb << 20);
  }
  OpenOnce(path, false);  // checkpoints the build's WAL into the file
  const double size_mb = static_cast<double>(std::filesystem::file_size(path)) / (1 << 20);
  std::printf("journal: %.0f MiB\n\n%-26s %10s %10s %12s\n", size_mb, "", "cold s", "warm s",
              "warm MiB/s");
  auto row = [&](const char* label, const std::function<void()>& work) {
    Evict(path);
    double cold = Seconds(work), warm = Seconds(work);
    std::printf("%-26s %10.3f %10.3f %12.0f\n", label, cold, warm, size_mb / warm);
  };
  row("open without check", [&] { OpenOnce(path, false); });
  row("open with quick_check", [&] { OpenOnce(path, true); });
  row("admin check (integrity)", [&] {
    auto report = CheckJournal(path);
    if (!report || !report.value().ok()) std::exit(1);
  });
  if (!keep) {
    for (const char* suffix : {"", "-wal", "-shm", ".lock"}) std::filesystem::remove(path + suffix);
  }
  return 0;
}
