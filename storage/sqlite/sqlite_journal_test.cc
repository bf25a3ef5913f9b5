// SQLite-only behaviour of SqliteJournal. What every backend shares is in the conformance suite
// (storage/testing/journal_conformance_test.cc, instantiated in sqlite_conformance_test.cc).
#include "reckon/storage/sqlite/sqlite_journal.h"

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace reckon::storage {
namespace {

TEST(JournalOpenTest, RefusesAFileThatIsNotAJournal) {
  testing::TempDir dir;
  {
    FILE* f = std::fopen(dir.File("junk.db").c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fputs("this is not a database, just some text that is long enough to matter..........",
               f);
    std::fclose(f);
  }
  auto opened = OpenSqliteJournal(dir.File("junk.db"));
  ASSERT_FALSE(opened);
  EXPECT_NE(opened.error().message().find("junk.db"), std::string::npos)
      << opened.error().ToString();
}

}  // namespace
}  // namespace reckon::storage
