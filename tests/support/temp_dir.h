// TempDir: a fresh directory under $TMPDIR (or /tmp) for one test, removed with everything in
// it when the object is destroyed. Owns the directory; not copyable.
#pragma once

#include <filesystem>
#include <string>

namespace reckon::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // path() / name, as a string.
  std::string File(const std::string& name) const;

 private:
  std::filesystem::path path_;
};

}  // namespace reckon::testing
