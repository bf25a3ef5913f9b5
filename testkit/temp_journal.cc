#include "reckon/testkit/temp_journal.h"

#include <stdlib.h>

#include <cstdlib>
#include <stdexcept>
#include <system_error>

namespace reckon::testkit {

TempJournal::TempJournal() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/reckon-testkit-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("cannot create a temporary directory from " + pattern +
                             "; set TMPDIR to a writable directory");
  }
  dir_ = pattern;
  path_ = (dir_ / "journal.db").string();
}

TempJournal::~TempJournal() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

}  // namespace reckon::testkit
