#include "reckon/storage/sqlite/checksum_vfs.h"

#include <array>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <vector>

#include "reckon/storage/sqlite/page_checksum.h"
#include "reckon/storage/sqlite/wal_format.h"

namespace reckon::storage {
namespace {

// Our file-control opcode (SQLite's own end below 100): ChecksumControl* as the argument.
constexpr int kChecksumControlOp = 0x52434b53;

struct ChecksumControl {
  enum class Op { kQuery, kSealFromNow };
  Op op = Op::kQuery;
  int page_size = 0;  // kSealFromNow
  bool verify = true;  // kSealFromNow
  ChecksumState state;  // kQuery: the answer
};

// One registered shim: SQLite's vfs struct, whose pAppData points back here.
struct ShimVfs {
  sqlite3_vfs vfs{};
  std::string name;
  std::string base;
};

sqlite3_vfs* Lower(sqlite3_vfs* vfs) {
  return sqlite3_vfs_find(static_cast<ShimVfs*>(vfs->pAppData)->base.c_str());
}

enum class FileKind { kMain, kWal };

// The state of one open main database or -wal. SQLite allocates the memory (the shim's
// szOsFile) and hands it to xOpen; the lower VFS's file lives at kLowerOffset in it.
struct ShimFile {
  sqlite3_file base{};  // first: SQLite sees this
  FileKind kind = FileKind::kMain;
  const char* path = nullptr;  // SQLite's, valid while the file is open
  ShimFile* partner = nullptr;  // main <-> its -wal, while both are open

  // Main file: what it knows of the database.
  bool sealed = false;
  bool verify = true;
  int page_size = 0;
  std::optional<ChecksumFault> fault;

  // -wal: a frame header SQLite wrote whose page has not come yet (offset -1: none), and the
  // sums of the last frame sealed, valid while nothing else touched the file.
  std::int64_t pending_offset = -1;
  std::array<std::byte, kWalFrameHeaderBytes> pending{};
  struct Chain {
    std::int64_t frame = 0;
    WalChecksum sum;
    bool big_endian = false;
  };
  std::optional<Chain> chain;

  std::vector<std::byte> scratch;  // a sealed copy of the page being written

  sqlite3_file* lower();
};

constexpr std::size_t kLowerOffset = (sizeof(ShimFile) + 15) / 16 * 16;

sqlite3_file* ShimFile::lower() {
  return reinterpret_cast<sqlite3_file*>(reinterpret_cast<char*>(this) + kLowerOffset);
}

ShimFile& Self(sqlite3_file* file) { return *reinterpret_cast<ShimFile*>(file); }

std::span<std::byte> Bytes(void* p, std::size_t n) { return {static_cast<std::byte*>(p), n}; }
std::span<const std::byte> Bytes(const void* p, std::size_t n) {
  return {static_cast<const std::byte*>(p), n};
}

int LowerRead(ShimFile& f, void* buf, int amt, std::int64_t offset) {
  return f.lower()->pMethods->xRead(f.lower(), buf, amt, offset);
}
int LowerWrite(ShimFile& f, const void* buf, int amt, std::int64_t offset) {
  return f.lower()->pMethods->xWrite(f.lower(), buf, amt, offset);
}

// Page 1 says whether the database reserves 8 bytes per page: if so, seal from now on.
void LearnFromHeader(ShimFile& main, std::span<const std::byte> bytes) {
  static constexpr char kMagic[] = "SQLite format 3";  // with its NUL: 16 bytes
  if (main.sealed || bytes.size() < 100 || std::memcmp(bytes.data(), kMagic, 16) != 0) return;
  int page_size = static_cast<int>(bytes[16]) << 8 | static_cast<int>(bytes[17]);
  if (page_size == 1) page_size = 65536;  // the header's 2 bytes spell 65536 as 1
  if (static_cast<int>(bytes[20]) != static_cast<int>(kPageChecksumBytes) ||
      !IsPageSize(page_size)) {
    return;
  }
  main.sealed = true;
  main.page_size = page_size;
}

std::span<std::byte> SealedCopy(ShimFile& f, const void* buf, int amt) {
  f.scratch.assign(static_cast<const std::byte*>(buf), static_cast<const std::byte*>(buf) + amt);
  SealPage(f.scratch);
  return f.scratch;
}

// --- main file ----------------------------------------------------------------------------

int MainRead(ShimFile& f, void* buf, int amt, std::int64_t offset) {
  const int rc = LowerRead(f, buf, amt, offset);
  if (rc != SQLITE_OK) return rc;
  if (offset == 0) LearnFromHeader(f, Bytes(buf, amt));
  if (!f.sealed || !f.verify || amt != f.page_size || offset % f.page_size != 0) return rc;
  if (PageIsSealed(Bytes(buf, amt))) return rc;
  f.fault = ChecksumFault{f.path, offset / f.page_size + 1, 0};
  return SQLITE_IOERR_DATA;
}

// Seals, in place in the file, the page that starts at `offset` (after a write of part of it).
int ResealMainPage(ShimFile& f, std::int64_t offset) {
  f.scratch.resize(f.page_size);
  const int rc = LowerRead(f, f.scratch.data(), f.page_size, offset);
  if (rc == SQLITE_IOERR_SHORT_READ) return SQLITE_OK;  // not all written yet
  if (rc != SQLITE_OK) return rc;
  SealPage(f.scratch);
  const std::size_t tail = f.page_size - kPageChecksumBytes;
  return LowerWrite(f, f.scratch.data() + tail, kPageChecksumBytes, offset + tail);
}

int MainWrite(ShimFile& f, const void* buf, int amt, std::int64_t offset) {
  if (offset == 0) LearnFromHeader(f, Bytes(buf, amt));
  if (!f.sealed) return LowerWrite(f, buf, amt, offset);
  if (amt == f.page_size && offset % f.page_size == 0) {
    std::span<std::byte> page = SealedCopy(f, buf, amt);
    return LowerWrite(f, page.data(), amt, offset);
  }
  int rc = LowerWrite(f, buf, amt, offset);
  for (std::int64_t page = offset / f.page_size * f.page_size; rc == SQLITE_OK && page < offset + amt;
       page += f.page_size) {
    rc = ResealMainPage(f, page);
  }
  return rc;
}

// --- -wal ---------------------------------------------------------------------------------

// Writes the held-back frame header as SQLite wrote it. On failure it stays held back, so that
// the next call on the file tries again and reports the error.
int FlushPending(ShimFile& w) {
  if (w.pending_offset < 0) return SQLITE_OK;
  const int rc = LowerWrite(w, w.pending.data(), kWalFrameHeaderBytes, w.pending_offset);
  if (rc == SQLITE_OK) w.pending_offset = -1;
  return rc;
}

// The sums frame `frame` continues: the last frame's if remembered, else from the file.
int ChainBefore(ShimFile& w, std::int64_t frame, std::int64_t page_size, ShimFile::Chain& out) {
  if (w.chain && w.chain->frame == frame - 1) {
    out = *w.chain;
    return SQLITE_OK;
  }
  std::array<std::byte, kWalHeaderBytes> header;
  int rc = LowerRead(w, header.data(), kWalHeaderBytes, 0);
  if (rc != SQLITE_OK) return rc;
  const std::optional<WalHeader> parsed = ParseWalHeader(header);
  if (!parsed) return SQLITE_IOERR_WRITE;  // SQLite wrote no valid header before its frames
  out = {frame - 1, parsed->checksum, parsed->big_endian_sums};
  if (frame == 1) return SQLITE_OK;
  std::array<std::byte, 8> sums;
  rc = LowerRead(w, sums.data(), 8, WalFrameOffset(frame - 1, page_size) + 16);
  if (rc != SQLITE_OK) return rc;
  out.sum = {ReadBigEndian32(sums.data()), ReadBigEndian32(sums.data() + 4)};
  return SQLITE_OK;
}

// Writes frame `frame`: its header (held back, or read from the file) with the sums over the
// sealed page, then the page; or, with `page_written`, only the sums (the page is in the file
// already, sealed).
int WriteFrame(ShimFile& w, std::int64_t frame, std::int64_t page_size,
               std::span<const std::byte> sealed_page, bool page_written) {
  const std::int64_t at = WalFrameOffset(frame, page_size);
  std::array<std::byte, kWalFrameHeaderBytes> header;
  int rc = SQLITE_OK;
  if (w.pending_offset == at) {
    header = w.pending;
    w.pending_offset = -1;
  } else {
    if ((rc = FlushPending(w)) != SQLITE_OK) return rc;
    if ((rc = LowerRead(w, header.data(), kWalFrameHeaderBytes, at)) != SQLITE_OK) return rc;
  }
  ShimFile::Chain chain;
  if ((rc = ChainBefore(w, frame, page_size, chain)) != SQLITE_OK) return rc;
  chain.sum = ContinueWalChecksum(chain.sum, std::span(header).first(8), chain.big_endian);
  chain.sum = ContinueWalChecksum(chain.sum, sealed_page, chain.big_endian);
  chain.frame = frame;
  WriteBigEndian32(chain.sum.s0, header.data() + 16);
  WriteBigEndian32(chain.sum.s1, header.data() + 20);
  if (page_written) {
    rc = LowerWrite(w, header.data() + 16, 8, at + 16);
  } else {
    rc = LowerWrite(w, header.data(), kWalFrameHeaderBytes, at);
    if (rc == SQLITE_OK) {
      rc = LowerWrite(w, sealed_page.data(), static_cast<int>(page_size),
                      at + kWalFrameHeaderBytes);
    }
  }
  if (rc == SQLITE_OK) w.chain = chain;
  return rc;
}

// After a write that was not one whole page: reseals, in the file, the page of every frame
// that write finished.
int ResealFinishedFrames(ShimFile& w, std::int64_t offset, int amt, std::int64_t page_size) {
  const std::int64_t frame_bytes = page_size + kWalFrameHeaderBytes;
  const std::int64_t end = offset + amt;
  std::int64_t frame = offset <= kWalHeaderBytes ? 1 : (offset - kWalHeaderBytes) / frame_bytes + 1;
  for (;; ++frame) {
    const std::int64_t page_at = WalFrameOffset(frame, page_size) + kWalFrameHeaderBytes;
    const std::int64_t page_end = page_at + page_size;
    if (page_end > end) return SQLITE_OK;
    if (page_end <= offset) continue;
    w.scratch.resize(page_size);
    int rc = LowerRead(w, w.scratch.data(), static_cast<int>(page_size), page_at);
    if (rc != SQLITE_OK) return rc;
    SealPage(w.scratch);
    const std::size_t tail = page_size - kPageChecksumBytes;
    rc = LowerWrite(w, w.scratch.data() + tail, kPageChecksumBytes, page_at + tail);
    if (rc == SQLITE_OK) rc = WriteFrame(w, frame, page_size, w.scratch, /*page_written=*/true);
    if (rc != SQLITE_OK) return rc;
  }
}

int WalWrite(ShimFile& w, const void* buf, int amt, std::int64_t offset) {
  ShimFile* main = w.partner;
  if (main != nullptr && !main->sealed && IsPageSize(amt) && WalFrameOfPage(offset, amt) != 0) {
    LearnFromHeader(*main, Bytes(buf, amt));
  }
  if (main == nullptr || !main->sealed) {
    const int rc = FlushPending(w);
    return rc != SQLITE_OK ? rc : LowerWrite(w, buf, amt, offset);
  }
  const std::int64_t page_size = main->page_size;
  // Anything but the next frame's header or page makes the remembered sums stale.
  if (w.chain && offset < WalFrameOffset(w.chain->frame + 1, page_size)) w.chain.reset();
  if (amt == kWalFrameHeaderBytes && WalFrameOfHeader(offset, page_size) != 0) {
    if (const int rc = FlushPending(w); rc != SQLITE_OK) return rc;
    std::memcpy(w.pending.data(), buf, kWalFrameHeaderBytes);
    w.pending_offset = offset;
    return SQLITE_OK;
  }
  if (const std::int64_t frame = WalFrameOfPage(offset, page_size);
      frame != 0 && amt == page_size) {
    std::span<std::byte> page = SealedCopy(w, buf, amt);
    return WriteFrame(w, frame, page_size, page, /*page_written=*/false);
  }
  int rc = FlushPending(w);
  if (rc == SQLITE_OK) rc = LowerWrite(w, buf, amt, offset);
  if (rc == SQLITE_OK) rc = ResealFinishedFrames(w, offset, amt, page_size);
  return rc;
}

int WalRead(ShimFile& w, void* buf, int amt, std::int64_t offset) {
  int rc = FlushPending(w);
  if (rc != SQLITE_OK) return rc;
  rc = LowerRead(w, buf, amt, offset);
  ShimFile* main = w.partner;
  if (rc != SQLITE_OK || main == nullptr) return rc;
  if (!main->sealed && IsPageSize(amt) && WalFrameOfPage(offset, amt) != 0) {
    LearnFromHeader(*main, Bytes(buf, amt));
  }
  if (!main->sealed || !main->verify || amt != main->page_size) return rc;
  const std::int64_t frame = WalFrameOfPage(offset, amt);
  if (frame == 0 || PageIsSealed(Bytes(buf, amt))) return rc;
  std::array<std::byte, 4> page_number{};
  const std::int64_t page =
      LowerRead(w, page_number.data(), 4, WalFrameOffset(frame, amt)) == SQLITE_OK
          ? ReadBigEndian32(page_number.data())
          : 0;
  main->fault = ChecksumFault{w.path, page, frame};
  return SQLITE_IOERR_DATA;
}

// --- sqlite3_io_methods -------------------------------------------------------------------

int Close(sqlite3_file* file) {
  ShimFile& f = Self(file);
  int rc = f.kind == FileKind::kWal ? FlushPending(f) : SQLITE_OK;
  const int closed = f.lower()->pMethods->xClose(f.lower());
  if (rc == SQLITE_OK) rc = closed;
  if (f.partner != nullptr) f.partner->partner = nullptr;
  f.~ShimFile();
  return rc;
}

int Read(sqlite3_file* file, void* buf, int amt, sqlite3_int64 offset) {
  ShimFile& f = Self(file);
  return f.kind == FileKind::kMain ? MainRead(f, buf, amt, offset) : WalRead(f, buf, amt, offset);
}

int Write(sqlite3_file* file, const void* buf, int amt, sqlite3_int64 offset) {
  ShimFile& f = Self(file);
  return f.kind == FileKind::kMain ? MainWrite(f, buf, amt, offset)
                                   : WalWrite(f, buf, amt, offset);
}

int Truncate(sqlite3_file* file, sqlite3_int64 size) {
  ShimFile& f = Self(file);
  if (f.kind == FileKind::kWal) {
    f.chain.reset();
    if (const int rc = FlushPending(f); rc != SQLITE_OK) return rc;
  }
  return f.lower()->pMethods->xTruncate(f.lower(), size);
}

int Sync(sqlite3_file* file, int flags) {
  ShimFile& f = Self(file);
  if (const int rc = FlushPending(f); rc != SQLITE_OK) return rc;
  return f.lower()->pMethods->xSync(f.lower(), flags);
}

int FileSize(sqlite3_file* file, sqlite3_int64* size) {
  ShimFile& f = Self(file);
  if (const int rc = FlushPending(f); rc != SQLITE_OK) return rc;
  return f.lower()->pMethods->xFileSize(f.lower(), size);
}

int Lock(sqlite3_file* file, int level) {
  return Self(file).lower()->pMethods->xLock(Self(file).lower(), level);
}
int Unlock(sqlite3_file* file, int level) {
  return Self(file).lower()->pMethods->xUnlock(Self(file).lower(), level);
}
int CheckReservedLock(sqlite3_file* file, int* out) {
  return Self(file).lower()->pMethods->xCheckReservedLock(Self(file).lower(), out);
}

int FileControl(sqlite3_file* file, int op, void* arg) {
  ShimFile& f = Self(file);
  if (op == kChecksumControlOp && f.kind == FileKind::kMain) {
    auto& control = *static_cast<ChecksumControl*>(arg);
    if (control.op == ChecksumControl::Op::kSealFromNow) {
      if (!IsPageSize(control.page_size)) return SQLITE_MISUSE;
      f.sealed = true;
      f.page_size = control.page_size;
      f.verify = control.verify;
    }
    control.state = {f.sealed, f.fault};
    return SQLITE_OK;
  }
  return f.lower()->pMethods->xFileControl(f.lower(), op, arg);
}

int SectorSize(sqlite3_file* file) {
  return Self(file).lower()->pMethods->xSectorSize(Self(file).lower());
}
int DeviceCharacteristics(sqlite3_file* file) {
  return Self(file).lower()->pMethods->xDeviceCharacteristics(Self(file).lower());
}

// The shared-memory calls come on the main file. SQLite publishes a commit to the other
// connections through shared memory, between barriers and under locks: before it does, the
// -wal's held-back header is written (a process crash after a commit must not lose it), and
// the remembered sums are dropped (another connection may write the -wal next).
void BeforeSharedMemory(ShimFile& f) {
  if (f.partner == nullptr) return;
  f.partner->chain.reset();
  (void)FlushPending(*f.partner);  // on failure, the -wal's next call reports it
}

bool HasSharedMemory(ShimFile& f) {
  return f.lower()->pMethods->iVersion >= 2 && f.lower()->pMethods->xShmMap != nullptr;
}

int ShmMap(sqlite3_file* file, int region, int size, int extend, void volatile** out) {
  ShimFile& f = Self(file);
  if (!HasSharedMemory(f)) return SQLITE_IOERR_SHMMAP;
  return f.lower()->pMethods->xShmMap(f.lower(), region, size, extend, out);
}
int ShmLock(sqlite3_file* file, int offset, int n, int flags) {
  ShimFile& f = Self(file);
  if (!HasSharedMemory(f)) return SQLITE_IOERR_SHMLOCK;
  BeforeSharedMemory(f);
  return f.lower()->pMethods->xShmLock(f.lower(), offset, n, flags);
}
void ShmBarrier(sqlite3_file* file) {
  ShimFile& f = Self(file);
  if (!HasSharedMemory(f)) return;
  BeforeSharedMemory(f);
  f.lower()->pMethods->xShmBarrier(f.lower());
}
int ShmUnmap(sqlite3_file* file, int delete_flag) {
  ShimFile& f = Self(file);
  if (!HasSharedMemory(f)) return SQLITE_OK;
  return f.lower()->pMethods->xShmUnmap(f.lower(), delete_flag);
}

int Fetch(sqlite3_file* file, sqlite3_int64 offset, int amt, void** out) {
  ShimFile& f = Self(file);
  const sqlite3_io_methods* lower = f.lower()->pMethods;
  if (f.sealed || lower->iVersion < 3 || lower->xFetch == nullptr) {
    *out = nullptr;  // SQLite reads through xRead instead, verified
    return SQLITE_OK;
  }
  return lower->xFetch(f.lower(), offset, amt, out);
}
int Unfetch(sqlite3_file* file, sqlite3_int64 offset, void* p) {
  const sqlite3_io_methods* lower = Self(file).lower()->pMethods;
  if (lower->iVersion < 3 || lower->xUnfetch == nullptr) return SQLITE_OK;
  return lower->xUnfetch(Self(file).lower(), offset, p);
}

constexpr sqlite3_io_methods kMethods = {
    3,        Close,      Read,   Write,      Truncate,   Sync,
    FileSize, Lock,       Unlock, CheckReservedLock,      FileControl,
    SectorSize,           DeviceCharacteristics,          ShmMap,
    ShmLock,  ShmBarrier, ShmUnmap, Fetch,    Unfetch,
};

// --- sqlite3_vfs --------------------------------------------------------------------------

int Open(sqlite3_vfs* vfs, const char* name, sqlite3_file* file, int flags, int* out_flags) {
  sqlite3_vfs* lower = Lower(vfs);
  if (lower == nullptr) return SQLITE_CANTOPEN;
  if ((flags & (SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_WAL)) == 0) {
    return lower->xOpen(lower, name, file, flags, out_flags);
  }
  if (kLowerOffset + static_cast<std::size_t>(lower->szOsFile) >
      static_cast<std::size_t>(vfs->szOsFile)) {
    return SQLITE_CANTOPEN;  // a base registered later under the name needs more room
  }
  ShimFile* f = new (file) ShimFile();
  f->kind = (flags & SQLITE_OPEN_WAL) != 0 ? FileKind::kWal : FileKind::kMain;
  f->path = name;
  sqlite3_file* inner = f->lower();
  inner->pMethods = nullptr;
  const int rc = lower->xOpen(lower, name, inner, flags, out_flags);
  if (rc != SQLITE_OK) {
    if (inner->pMethods != nullptr) inner->pMethods->xClose(inner);
    f->~ShimFile();
    file->pMethods = nullptr;
    return rc;
  }
  f->base.pMethods = &kMethods;
  if (f->kind == FileKind::kWal) {
    sqlite3_file* db = sqlite3_database_file_object(name);
    if (db != nullptr && db->pMethods == &kMethods) {
      f->partner = &Self(db);
      f->partner->partner = f;
    }
  } else {
    std::array<std::byte, 100> header{};
    if (inner->pMethods->xRead(inner, header.data(), 100, 0) == SQLITE_OK) {
      LearnFromHeader(*f, header);
    }
  }
  return SQLITE_OK;
}

int Delete(sqlite3_vfs* vfs, const char* name, int sync_dir) {
  sqlite3_vfs* lower = Lower(vfs);
  return lower ? lower->xDelete(lower, name, sync_dir) : SQLITE_IOERR_DELETE;
}
int Access(sqlite3_vfs* vfs, const char* name, int flags, int* out) {
  sqlite3_vfs* lower = Lower(vfs);
  return lower ? lower->xAccess(lower, name, flags, out) : SQLITE_IOERR_ACCESS;
}
int FullPathname(sqlite3_vfs* vfs, const char* name, int n, char* out) {
  sqlite3_vfs* lower = Lower(vfs);
  return lower ? lower->xFullPathname(lower, name, n, out) : SQLITE_CANTOPEN;
}
void* DlOpen(sqlite3_vfs* vfs, const char* name) {
  sqlite3_vfs* lower = Lower(vfs);
  return lower ? lower->xDlOpen(lower, name) : nullptr;
}
void DlError(sqlite3_vfs* vfs, int n, char* out) {
  if (sqlite3_vfs* lower = Lower(vfs)) lower->xDlError(lower, n, out);
}
void (*DlSym(sqlite3_vfs* vfs, void* handle, const char* symbol))(void) {
  sqlite3_vfs* lower = Lower(vfs);
  return lower ? lower->xDlSym(lower, handle, symbol) : nullptr;
}
void DlClose(sqlite3_vfs* vfs, void* handle) {
  if (sqlite3_vfs* lower = Lower(vfs)) lower->xDlClose(lower, handle);
}
int Randomness(sqlite3_vfs* vfs, int n, char* out) {
  sqlite3_vfs* lower = Lower(vfs);
  return lower ? lower->xRandomness(lower, n, out) : 0;
}
int Sleep(sqlite3_vfs* vfs, int micros) {
  sqlite3_vfs* lower = Lower(vfs);
  return lower ? lower->xSleep(lower, micros) : 0;
}
int CurrentTime(sqlite3_vfs* vfs, double* out) {
  sqlite3_vfs* lower = Lower(vfs);
  return lower ? lower->xCurrentTime(lower, out) : SQLITE_ERROR;
}
int GetLastError(sqlite3_vfs* vfs, int n, char* out) {
  sqlite3_vfs* lower = Lower(vfs);
  return lower ? lower->xGetLastError(lower, n, out) : 0;
}
int CurrentTimeInt64(sqlite3_vfs* vfs, sqlite3_int64* out) {
  sqlite3_vfs* lower = Lower(vfs);
  if (lower == nullptr) return SQLITE_ERROR;
  if (lower->iVersion >= 2 && lower->xCurrentTimeInt64 != nullptr) {
    return lower->xCurrentTimeInt64(lower, out);
  }
  double days = 0;
  const int rc = lower->xCurrentTime(lower, &days);
  *out = static_cast<sqlite3_int64>(days * 86400000.0);
  return rc;
}

// SQLite's list of VFSes is process-wide, and so is this map of the shims registered in it:
// they are never unregistered (a connection may use one until the process ends), hence never
// destroyed.
struct Registry {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<ShimVfs>> by_base;  // GUARDED_BY(mutex)
};

Registry& TheRegistry() {
  static Registry* const registry = new Registry();  // never destroyed, see above
  return *registry;
}

}  // namespace

Result<std::string> ChecksumVfsOver(const std::string& base) {
  Registry& registry = TheRegistry();
  std::lock_guard lock(registry.mutex);
  sqlite3_vfs* lower = sqlite3_vfs_find(base.empty() ? nullptr : base.c_str());
  if (lower == nullptr) {
    return Err(Errc::kUnavailable, "no SQLite VFS is called '" + base + "'");
  }
  if (auto found = registry.by_base.find(lower->zName); found != registry.by_base.end()) {
    return found->second->name;
  }
  auto shim = std::make_unique<ShimVfs>();
  shim->base = lower->zName;
  shim->name = "reckon-checksum/" + shim->base;
  sqlite3_vfs& vfs = shim->vfs;
  vfs.iVersion = lower->iVersion < 2 ? lower->iVersion : 2;
  vfs.szOsFile = static_cast<int>(kLowerOffset) + lower->szOsFile;
  vfs.mxPathname = lower->mxPathname;
  vfs.zName = shim->name.c_str();
  vfs.pAppData = shim.get();
  vfs.xOpen = Open;
  vfs.xDelete = Delete;
  vfs.xAccess = Access;
  vfs.xFullPathname = FullPathname;
  vfs.xDlOpen = DlOpen;
  vfs.xDlError = DlError;
  vfs.xDlSym = DlSym;
  vfs.xDlClose = DlClose;
  vfs.xRandomness = Randomness;
  vfs.xSleep = Sleep;
  vfs.xCurrentTime = CurrentTime;
  vfs.xGetLastError = GetLastError;
  vfs.xCurrentTimeInt64 = CurrentTimeInt64;
  if (const int rc = sqlite3_vfs_register(&vfs, /*makeDflt=*/0); rc != SQLITE_OK) {
    return Err(Errc::kInternal, std::string("cannot register the checksum VFS: ") +
                                    sqlite3_errstr(rc));
  }
  std::string name = shim->name;
  std::string key = shim->base;
  registry.by_base.emplace(std::move(key), std::move(shim));
  return name;
}

std::string ChecksumFault::Where() const {
  return "page " + (page > 0 ? std::to_string(page) : std::string("?")) +
         (wal_frame == 0 ? " (in '" + file + "')"
                         : " (frame " + std::to_string(wal_frame) + " of '" + file + "')");
}

std::string ChecksumFault::Describe() const {
  return Where() + " fails its checksum: its bytes changed after they were written (a disk "
                   "fault, or a write that did not go through Reckon)";
}

std::optional<ChecksumState> ChecksumStateOf(sqlite3* db) {
  ChecksumControl control;
  if (sqlite3_file_control(db, "main", kChecksumControlOp, &control) != SQLITE_OK) {
    return std::nullopt;
  }
  return control.state;
}

bool SealFromNow(sqlite3* db, int page_size, bool verify) {
  ChecksumControl control;
  control.op = ChecksumControl::Op::kSealFromNow;
  control.page_size = page_size;
  control.verify = verify;
  return sqlite3_file_control(db, "main", kChecksumControlOp, &control) == SQLITE_OK;
}

}  // namespace reckon::storage
