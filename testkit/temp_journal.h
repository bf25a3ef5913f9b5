// TempJournal: a fresh temporary directory holding one SQLite journal file, for one test.
// The directory (journal, WAL, lock file, anything else a test put there) is removed with
// everything in it when the object is destroyed. The file itself is created by whoever opens
// the journal first (EmbeddedHost::Open, storage::OpenJournal).
//
// Where: under $TMPDIR, or /tmp. Construction throws std::runtime_error if the directory cannot
// be made (a test cannot go on without it). Owns the directory; not copyable.
#pragma once

#include <filesystem>
#include <string>

namespace reckon::testkit {

class TempJournal {
 public:
  TempJournal();
  ~TempJournal();
  TempJournal(const TempJournal&) = delete;
  TempJournal& operator=(const TempJournal&) = delete;

  // The journal file's path: <dir>/journal.db.
  const std::string& path() const { return path_; }
  // The directory, for files of the test's own (removed with it).
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  std::string path_;
};

}  // namespace reckon::testkit
