#include "reckon/storage/sqlite/page_scan.h"

#include <chrono>
#include <fstream>
#include <span>
#include <thread>

#include "reckon/storage/sqlite/journal_checksums.h"
#include "reckon/storage/sqlite/page_checksum.h"
#include "reckon/storage/sqlite/wal_format.h"

namespace reckon::storage {
namespace {

// Reads `bytes.size()` bytes at `offset`; false at the end of the file.
bool ReadAt(std::ifstream& file, std::int64_t offset, std::span<std::byte> bytes) {
  file.clear();
  file.seekg(offset);
  file.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return file.gcount() == static_cast<std::streamsize>(bytes.size());
}

Error Unreadable(const std::string& path) {
  return Err(Errc::kUnavailable, "cannot read '" + path + "' to verify its page checksums");
}

// The frames of the -wal that recovery would keep (up to the last commit before the first
// frame that does not match), each verified.
Result<void> ScanWal(const std::string& path, std::int64_t page_size, PageScanReport& report) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return Ok();  // no -wal
  std::vector<std::byte> frame(kWalFrameHeaderBytes + page_size);
  std::optional<WalHeader> header;
  if (ReadAt(file, 0, std::span(frame).first(kWalHeaderBytes))) header = ParseWalHeader(frame);
  if (!header || header->page_size != page_size) return Ok();  // nothing recovery would keep
  WalChecksum sum = header->checksum;
  std::vector<ChecksumFault> uncommitted;
  std::int64_t uncommitted_frames = 0;
  for (std::int64_t n = 1; ReadAt(file, WalFrameOffset(n, page_size), frame); ++n) {
    const std::byte* h = frame.data();
    if (ReadBigEndian32(h + 8) != header->salt1 || ReadBigEndian32(h + 12) != header->salt2) break;
    sum = ContinueWalChecksum(sum, std::span(frame).first(8), header->big_endian_sums);
    const auto page = std::span(frame).subspan(kWalFrameHeaderBytes);
    sum = ContinueWalChecksum(sum, page, header->big_endian_sums);
    if (sum != WalChecksum{ReadBigEndian32(h + 16), ReadBigEndian32(h + 20)}) break;
    ++uncommitted_frames;
    if (!PageIsSealed(page)) uncommitted.push_back({path, ReadBigEndian32(h), n});
    if (ReadBigEndian32(h + 4) != 0) {  // a commit: what came before it counts
      report.wal_frames += uncommitted_frames;
      report.damaged.insert(report.damaged.end(), uncommitted.begin(), uncommitted.end());
      uncommitted.clear();
      uncommitted_frames = 0;
    }
  }
  return Ok();
}

Result<void> ScanMain(const std::string& path, std::int64_t page_size, PageScanReport& report) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return Unreadable(path);
  // SQLite never writes the page that holds the lock bytes at 1 GiB.
  const std::int64_t lock_page = (std::int64_t{1} << 30) / page_size + 1;
  std::vector<std::byte> page(page_size);
  int rereads = 60;  // for at most 20 failing pages: a file damaged all over is not waited on
  for (std::int64_t n = 1; ReadAt(file, (n - 1) * page_size, page); ++n) {
    if (n == lock_page) continue;
    bool sealed = PageIsSealed(page);
    for (int retry = 0; !sealed && retry < 3 && rereads-- > 0; ++retry) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      sealed = ReadAt(file, (n - 1) * page_size, page) && PageIsSealed(page);
    }
    ++report.main_pages;
    if (!sealed) report.damaged.push_back({path, n, 0});
  }
  if (file.bad()) return Unreadable(path);
  return Ok();
}

}  // namespace

Result<PageScanReport> ScanPages(SqliteDb& db) {
  PageScanReport report;
  RECKON_TRY(report.sealed, HasPageChecksums(db));
  if (!report.sealed) return report;
  RECKON_TRY(std::int64_t page_size, db.QueryInt("PRAGMA page_size"));
  // A read transaction for the length of the scan: checkpoints then only write pages of the
  // main file whose newer copy is in the -wal.
  RECKON_TRY(db.Exec("BEGIN"));
  auto scanned = [&]() -> Result<void> {
    RECKON_TRY(std::int64_t pages, db.QueryInt("SELECT count(*) FROM sqlite_schema"));
    (void)pages;
    RECKON_TRY(ScanMain(db.path(), page_size, report));
    return ScanWal(db.path() + "-wal", page_size, report);
  }();
  (void)db.Exec("COMMIT");
  if (!scanned) return scanned.error();
  return report;
}

std::vector<OwnedFault> WalkForDamage(SqliteDb& db) {
  std::vector<OwnedFault> found;
  auto objects = db.Prepare("SELECT name FROM sqlite_schema WHERE rootpage > 0");
  auto walk = db.Prepare("SELECT count(*) FROM dbstat WHERE name = ?1");
  if (!objects || !walk) return found;
  std::vector<std::string> names = {"sqlite_schema"};
  for (auto row = objects.value().Step(); row && row.value(); row = objects.value().Step()) {
    names.emplace_back(objects.value().ColumnText(0));
  }
  std::optional<ChecksumFault> seen;
  for (const std::string& name : names) {
    walk.value().Reset();
    walk.value().Bind(1, name);
    if (walk.value().Step()) continue;
    const std::optional<ChecksumState> state = ChecksumStateOf(db.handle());
    if (!state || !state->last_fault) continue;
    const ChecksumFault& fault = *state->last_fault;
    if (seen && seen->page == fault.page && seen->wal_frame == fault.wal_frame) continue;
    found.push_back({fault, name});
    seen = fault;
  }
  return found;
}

}  // namespace reckon::storage
