#include "reckon/storage/testing/power_loss_vfs.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <utility>

namespace reckon::storage {
namespace {

// What SQLite allocates for one open file (szOsFile): this header, then the real VFS's file.
struct ShimFile {
  sqlite3_file base;          // pMethods: the shim's methods, or null until opened
  PowerLossVfs* vfs;
  const std::string* path;    // the key in PowerLossVfs::files_; null: not tracked
  bool dir_sync_due;          // the unix VFS syncs the directory at this handle's first sync
  sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
};
static_assert(sizeof(ShimFile) % 8 == 0, "the real file that follows must stay aligned");

ShimFile& Shim(sqlite3_file* file) { return *reinterpret_cast<ShimFile*>(file); }
const sqlite3_io_methods& Real(sqlite3_file* file) { return *Shim(file).real()->pMethods; }

std::optional<std::string> ReadRealFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

Result<void> WriteRealFile(const std::string& path, const std::optional<std::string>& image) {
  std::error_code ec;
  if (!image) {
    std::filesystem::remove(path, ec);
    if (ec) return Err(Errc::kUnavailable, "cannot remove '" + path + "': " + ec.message());
    return Ok();
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(image->data(), static_cast<std::streamsize>(image->size()));
  out.close();
  if (!out) return Err(Errc::kUnavailable, "cannot write the image of '" + path + "'");
  return Ok();
}

constexpr int kTrackedKinds = SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_WAL | SQLITE_OPEN_MAIN_JOURNAL |
                              SQLITE_OPEN_SUPER_JOURNAL;

}  // namespace

struct PowerLossVfs::Glue {
  static PowerLossVfs& Of(sqlite3_vfs* vfs) { return *static_cast<PowerLossVfs*>(vfs->pAppData); }
  static sqlite3_vfs* RealVfs(sqlite3_vfs* vfs) { return Of(vfs).real_; }

  static int Open(sqlite3_vfs* vfs, const char* name, sqlite3_file* file, int flags,
                  int* out_flags) {
    PowerLossVfs& self = Of(vfs);
    ShimFile& shim = Shim(file);
    shim.base.pMethods = nullptr;
    shim.vfs = &self;
    shim.path = nullptr;
    shim.dir_sync_due = false;
    const bool tracked = name != nullptr && (flags & kTrackedKinds) != 0 &&
                         (flags & SQLITE_OPEN_DELETEONCLOSE) == 0;
    std::lock_guard lock(self.mutex_);
    if (self.dark_) return SQLITE_CANTOPEN;
    PowerLossFile* state = tracked ? &self.TrackLocked(name) : nullptr;
    const bool existed = state == nullptr || state->Exists();
    int rc = self.real_->xOpen(self.real_, name, shim.real(), flags, out_flags);
    if (rc != SQLITE_OK) return rc;
    if (tracked) {
      if (!existed) state->Create();
      shim.path = &self.files_.find(name)->first;
      shim.dir_sync_due = (flags & SQLITE_OPEN_CREATE) != 0 && (flags & SQLITE_OPEN_MAIN_DB) == 0;
      if ((flags & SQLITE_OPEN_MAIN_DB) != 0) self.databases_.insert(name);
    }
    ++self.open_files_;
    shim.base.pMethods = &kMethods;
    return SQLITE_OK;
  }

  static int Delete(sqlite3_vfs* vfs, const char* name, int sync_dir) {
    PowerLossVfs& self = Of(vfs);
    std::lock_guard lock(self.mutex_);
    auto found = self.files_.find(name);
    if (found == self.files_.end()) {
      if (self.dark_) return SQLITE_IOERR_DELETE;
      return self.real_->xDelete(self.real_, name, 0);
    }
    const Tick tick = self.TickLocked();
    if (tick == Tick::kDark) return SQLITE_IOERR_DELETE;
    int rc = self.real_->xDelete(self.real_, name, 0);  // the directory sync is the model's
    if (rc == SQLITE_OK) {
      found->second.Delete(/*dir_synced=*/false);
      if (sync_dir != 0 && tick == Tick::kGo) self.SyncDirectoryLocked();
    }
    return tick == Tick::kTripped ? SQLITE_IOERR_DELETE : rc;
  }

  static int Access(sqlite3_vfs* vfs, const char* name, int flags, int* out) {
    return RealVfs(vfs)->xAccess(RealVfs(vfs), name, flags, out);
  }
  static int FullPathname(sqlite3_vfs* vfs, const char* name, int size, char* out) {
    return RealVfs(vfs)->xFullPathname(RealVfs(vfs), name, size, out);
  }
  static void* DlOpen(sqlite3_vfs* vfs, const char* name) {
    return RealVfs(vfs)->xDlOpen(RealVfs(vfs), name);
  }
  static void DlError(sqlite3_vfs* vfs, int size, char* out) {
    RealVfs(vfs)->xDlError(RealVfs(vfs), size, out);
  }
  static void (*DlSym(sqlite3_vfs* vfs, void* handle, const char* symbol))(void) {
    return RealVfs(vfs)->xDlSym(RealVfs(vfs), handle, symbol);
  }
  static void DlClose(sqlite3_vfs* vfs, void* handle) {
    RealVfs(vfs)->xDlClose(RealVfs(vfs), handle);
  }
  static int Randomness(sqlite3_vfs* vfs, int size, char* out) {
    return RealVfs(vfs)->xRandomness(RealVfs(vfs), size, out);
  }
  static int Sleep(sqlite3_vfs* vfs, int micros) {
    return RealVfs(vfs)->xSleep(RealVfs(vfs), micros);
  }
  static int CurrentTime(sqlite3_vfs* vfs, double* out) {
    return RealVfs(vfs)->xCurrentTime(RealVfs(vfs), out);
  }
  static int GetLastError(sqlite3_vfs* vfs, int size, char* out) {
    return RealVfs(vfs)->xGetLastError(RealVfs(vfs), size, out);
  }
  static int CurrentTimeInt64(sqlite3_vfs* vfs, sqlite3_int64* out) {
    return RealVfs(vfs)->xCurrentTimeInt64(RealVfs(vfs), out);
  }

  // --- file methods ---
  static int Close(sqlite3_file* file) {
    ShimFile& shim = Shim(file);
    {
      std::lock_guard lock(shim.vfs->mutex_);
      --shim.vfs->open_files_;
    }
    return Real(file).xClose(shim.real());
  }
  static int Read(sqlite3_file* file, void* out, int size, sqlite3_int64 offset) {
    return Real(file).xRead(Shim(file).real(), out, size, offset);
  }
  static int Write(sqlite3_file* file, const void* data, int size, sqlite3_int64 offset) {
    ShimFile& shim = Shim(file);
    if (shim.path == nullptr) return Real(file).xWrite(shim.real(), data, size, offset);
    PowerLossVfs& self = *shim.vfs;
    std::lock_guard lock(self.mutex_);
    const Tick tick = self.TickLocked();
    if (tick == Tick::kDark) return SQLITE_IOERR_WRITE;
    int rc = Real(file).xWrite(shim.real(), data, size, offset);
    if (rc == SQLITE_OK) {
      self.files_.at(*shim.path)
          .Write(offset, std::string_view(static_cast<const char*>(data), size));
    }
    return tick == Tick::kTripped ? SQLITE_IOERR_WRITE : rc;
  }
  static int Truncate(sqlite3_file* file, sqlite3_int64 size) {
    ShimFile& shim = Shim(file);
    if (shim.path == nullptr) return Real(file).xTruncate(shim.real(), size);
    PowerLossVfs& self = *shim.vfs;
    std::lock_guard lock(self.mutex_);
    const Tick tick = self.TickLocked();
    if (tick == Tick::kDark) return SQLITE_IOERR_TRUNCATE;
    int rc = Real(file).xTruncate(shim.real(), size);
    if (rc == SQLITE_OK) self.files_.at(*shim.path).Truncate(size);
    return tick == Tick::kTripped ? SQLITE_IOERR_TRUNCATE : rc;
  }
  // The real fsync is not called: durability is the model's, and thousands of cuts would
  // otherwise wait on the test machine's disk.
  static int Sync(sqlite3_file* file, int /*flags*/) {
    ShimFile& shim = Shim(file);
    if (shim.path == nullptr) return SQLITE_OK;
    PowerLossVfs& self = *shim.vfs;
    std::lock_guard lock(self.mutex_);
    if (self.TickLocked() != Tick::kGo) return SQLITE_IOERR_FSYNC;
    if (self.metadata_ == Metadata::kOrdered || shim.dir_sync_due) self.SyncDirectoryLocked();
    shim.dir_sync_due = false;
    self.files_.at(*shim.path).Sync();
    ++self.stats_.syncs;
    return SQLITE_OK;
  }
  static int FileSize(sqlite3_file* file, sqlite3_int64* out) {
    return Real(file).xFileSize(Shim(file).real(), out);
  }
  static int Lock(sqlite3_file* file, int level) {
    return Real(file).xLock(Shim(file).real(), level);
  }
  static int Unlock(sqlite3_file* file, int level) {
    return Real(file).xUnlock(Shim(file).real(), level);
  }
  static int CheckReservedLock(sqlite3_file* file, int* out) {
    return Real(file).xCheckReservedLock(Shim(file).real(), out);
  }
  static int FileControl(sqlite3_file* file, int op, void* arg) {
    return Real(file).xFileControl(Shim(file).real(), op, arg);
  }
  static int SectorSize(sqlite3_file* file) { return Real(file).xSectorSize(Shim(file).real()); }
  static int DeviceCharacteristics(sqlite3_file* file) {
    return Real(file).xDeviceCharacteristics(Shim(file).real());
  }
  static int ShmMap(sqlite3_file* file, int region, int size, int extend, void volatile** out) {
    return Real(file).xShmMap(Shim(file).real(), region, size, extend, out);
  }
  static int ShmLock(sqlite3_file* file, int offset, int n, int flags) {
    return Real(file).xShmLock(Shim(file).real(), offset, n, flags);
  }
  static void ShmBarrier(sqlite3_file* file) { Real(file).xShmBarrier(Shim(file).real()); }
  static int ShmUnmap(sqlite3_file* file, int delete_flag) {
    return Real(file).xShmUnmap(Shim(file).real(), delete_flag);
  }

  // Version 2: shared memory for WAL, no memory-mapped I/O (whose writes would bypass xWrite).
  static const sqlite3_io_methods kMethods;
};

const sqlite3_io_methods PowerLossVfs::Glue::kMethods = {
    2,
    &Glue::Close,
    &Glue::Read,
    &Glue::Write,
    &Glue::Truncate,
    &Glue::Sync,
    &Glue::FileSize,
    &Glue::Lock,
    &Glue::Unlock,
    &Glue::CheckReservedLock,
    &Glue::FileControl,
    &Glue::SectorSize,
    &Glue::DeviceCharacteristics,
    &Glue::ShmMap,
    &Glue::ShmLock,
    &Glue::ShmBarrier,
    &Glue::ShmUnmap,
    nullptr,
    nullptr,
};

PowerLossVfs::PowerLossVfs(std::string name, std::uint64_t seed, Metadata metadata,
                           sqlite3_vfs* real)
    : name_(std::move(name)), metadata_(metadata), real_(real), rng_(seed) {
  vfs_.iVersion = 2;
  vfs_.szOsFile = static_cast<int>(sizeof(ShimFile)) + real->szOsFile;
  vfs_.mxPathname = real->mxPathname;
  vfs_.zName = name_.c_str();
  vfs_.pAppData = this;
  vfs_.xOpen = &Glue::Open;
  vfs_.xDelete = &Glue::Delete;
  vfs_.xAccess = &Glue::Access;
  vfs_.xFullPathname = &Glue::FullPathname;
  vfs_.xDlOpen = &Glue::DlOpen;
  vfs_.xDlError = &Glue::DlError;
  vfs_.xDlSym = &Glue::DlSym;
  vfs_.xDlClose = &Glue::DlClose;
  vfs_.xRandomness = &Glue::Randomness;
  vfs_.xSleep = &Glue::Sleep;
  vfs_.xCurrentTime = &Glue::CurrentTime;
  vfs_.xGetLastError = &Glue::GetLastError;
  vfs_.xCurrentTimeInt64 = &Glue::CurrentTimeInt64;
}

Result<std::unique_ptr<PowerLossVfs>> PowerLossVfs::Register(std::string name,
                                                             std::uint64_t seed,
                                                             Metadata metadata) {
  sqlite3_initialize();
  sqlite3_vfs* real = sqlite3_vfs_find("unix");
  if (real == nullptr) {
    return Err(Errc::kUnavailable, "SQLite has no 'unix' VFS for the power-loss VFS to wrap");
  }
  if (sqlite3_vfs_find(name.c_str()) != nullptr) {
    return Err(Errc::kAlreadyExists,
               "a SQLite VFS named '" + name + "' is registered already; pick another name");
  }
  std::unique_ptr<PowerLossVfs> vfs(new PowerLossVfs(std::move(name), seed, metadata, real));
  if (int rc = sqlite3_vfs_register(&vfs->vfs_, 0); rc != SQLITE_OK) {
    return Err(Errc::kInternal, std::string("registering the power-loss VFS failed: ") +
                                    sqlite3_errstr(rc));
  }
  return vfs;
}

PowerLossVfs::~PowerLossVfs() { sqlite3_vfs_unregister(&vfs_); }

PowerLossVfs::Tick PowerLossVfs::TickLocked() {
  if (dark_) return Tick::kDark;
  ++stats_.mutating_calls;
  if (countdown_ == 0) {
    dark_ = true;
    countdown_ = -1;
    return Tick::kTripped;
  }
  if (countdown_ > 0) --countdown_;
  return Tick::kGo;
}

PowerLossFile& PowerLossVfs::TrackLocked(const std::string& path) {
  auto found = files_.find(path);
  if (found != files_.end()) return found->second;
  return files_.emplace(path, PowerLossFile(ReadRealFile(path))).first->second;
}

void PowerLossVfs::SyncDirectoryLocked() {
  for (auto& [path, file] : files_) file.SyncMetadata();
}

void PowerLossVfs::ArmCut(std::int64_t ops) {
  std::lock_guard lock(mutex_);
  countdown_ = ops;
}

void PowerLossVfs::CutNow() {
  std::lock_guard lock(mutex_);
  dark_ = true;
  countdown_ = -1;
}

bool PowerLossVfs::powered_off() const {
  std::lock_guard lock(mutex_);
  return dark_;
}

PowerLossVfs::Stats PowerLossVfs::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

Result<PowerLossVfs::RebootReport> PowerLossVfs::Reboot() {
  std::lock_guard lock(mutex_);
  if (open_files_ != 0) {
    return Err(Errc::kFailedPrecondition,
               std::to_string(open_files_) + " file(s) are still open through the power-loss " +
                   "VFS '" + name_ + "': close every connection before the reboot");
  }
  RebootReport report;
  for (auto& [path, file] : files_) {
    const std::optional<std::string> live = file.Live();
    const std::optional<std::string> real = ReadRealFile(path);
    if (live != real) {
      return Err(Errc::kInternal,
                 "power-loss VFS self-check: '" + path + "' holds " +
                     (real ? std::to_string(real->size()) + " bytes" : "nothing") +
                     " but the model says " +
                     (live ? std::to_string(live->size()) + " bytes" : "nothing") +
                     "; a write bypassed the VFS");
    }
    report.pending += static_cast<int>(file.pending());
    const auto cut = static_cast<PowerLossFile::Cut>(rng_() % PowerLossFile::kCuts);
    std::optional<std::string> image = file.ImageAfterCut(cut, rng_);
    RECKON_TRY(WriteRealFile(path, image));
    file.Reboot(std::move(image));
    ++report.files;
  }
  for (const std::string& database : databases_) {
    const std::string shm = database + "-shm";
    std::optional<std::string> content = ReadRealFile(shm);
    if (!content) continue;
    switch (rng_() % 3) {
      case 0:
        continue;  // the page cache had written it back
      case 1: {
        RECKON_TRY(WriteRealFile(shm, std::nullopt));
        break;
      }
      default: {
        for (char& c : *content) c = static_cast<char>(rng_() & 0xff);
        RECKON_TRY(WriteRealFile(shm, content));
        break;
      }
    }
    ++report.shm_files_damaged;
  }
  dark_ = false;
  countdown_ = -1;
  ++stats_.cuts;
  stats_.pending_at_cuts += report.pending;
  return report;
}

}  // namespace reckon::storage
