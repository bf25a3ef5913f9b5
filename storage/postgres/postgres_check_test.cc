// What Reckon says about a PostgreSQL cluster's data checksums (storage/postgres/
// postgres_check.h): nothing at open when they are on (the test clusters are made with
// `initdb --data-checksums`, as production ones should be), a warning at open and in
// `reckon admin check`'s report when they are off; and the check's counts and verdict.
#include "reckon/storage/postgres/postgres_check.h"

#include <gtest/gtest.h>

#include "reckon/storage/postgres/postgres_journal.h"
#include "reckon/storage/testing/journal_requests.h"
#include "reckon/storage/testing/postgres_test_env.h"

namespace reckon::storage {
namespace {

TEST(PostgresCheckTest, AClusterWithDataChecksumsIsCheckedWithoutAWarning) {
  ASSERT_NE(TestPostgres(), nullptr) << TestPostgresStartError();
  auto conninfo = FreshDatabase();
  ASSERT_TRUE(conninfo) << conninfo.error().ToString();
  {
    auto journal = OpenPostgresJournal(conninfo.value());
    ASSERT_TRUE(journal) << journal.error().ToString();
    EXPECT_EQ(journal.value()->integrity_warning(), "");
    ASSERT_TRUE(FillRuns(*journal.value(), 3));
  }
  auto report = CheckPostgresJournal(conninfo.value());
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_TRUE(report.value().ok()) << report.value().problems.front();
  EXPECT_EQ(report.value().page_checksums, "on");
  EXPECT_TRUE(report.value().warnings.empty());
  EXPECT_EQ(report.value().runs, 3);
  EXPECT_EQ(report.value().events, 60);
  EXPECT_EQ(report.value().operations, 3);
}

TEST(PostgresCheckTest, AClusterWithoutDataChecksumsIsWarnedAbout) {
  testing::PostgresServerOptions options;
  options.data_checksums = false;
  auto server = testing::PostgresServer::Start(options);
  ASSERT_TRUE(server) << server.error().ToString();
  auto conninfo = server.value()->CreateDatabase("unverified");
  ASSERT_TRUE(conninfo) << conninfo.error().ToString();
  {
    auto journal = OpenPostgresJournal(conninfo.value());
    ASSERT_TRUE(journal) << journal.error().ToString();
    EXPECT_NE(journal.value()->integrity_warning().find("data checksums off"), std::string::npos)
        << journal.value()->integrity_warning();
    EXPECT_NE(journal.value()->integrity_warning().find("pg_checksums --enable"),
              std::string::npos);
  }
  auto report = CheckPostgresJournal(conninfo.value());
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_TRUE(report.value().ok()) << "checksums off is a warning, not damage";
  EXPECT_EQ(report.value().page_checksums, "off");
  ASSERT_EQ(report.value().warnings.size(), 1u);
  EXPECT_NE(report.value().warnings[0].find(report.value().path), std::string::npos);
}

}  // namespace
}  // namespace reckon::storage
