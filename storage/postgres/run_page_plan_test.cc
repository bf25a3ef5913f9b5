// Pages of runs (BuildPgRunPageSql, run_page_sql.h) on a PostgreSQL journal of 20,000 runs,
// analysed: the planner serves each page from an index in key order (an Index Scan on runs,
// no Seq Scan of runs, no Sort of the matching runs), however deep the page. What
// `reckon list` and the console ask for on a journal of a million runs.
#include "reckon/storage/postgres/run_page_sql.h"

#include <gtest/gtest.h>

#include <string>

#include "reckon/storage/postgres/postgres_journal.h"
#include "reckon/storage/testing/postgres_test_env.h"

namespace reckon::storage {
namespace {

constexpr std::int64_t kRuns = 20000;
constexpr std::size_t kLimit = 50;

// As run_page_plan_test.cc of SQLite: one in 3 completed, one in 100 failed, one in 4 of type
// "refund", one operation per run, of tool "charge" for one in 2.
constexpr const char* kFill = R"sql(
INSERT INTO runs (run_pk, workflow_id, run_id, workflow_type, status, next_seq, created_at_us,
                  updated_at_us)
SELECT i, 'wf-' || i, 'run-' || i, CASE i % 4 WHEN 0 THEN 'refund' ELSE 'payment' END,
       CASE WHEN i % 100 = 0 THEN 'failed' WHEN i % 3 = 0 THEN 'completed' ELSE 'running' END,
       1, i, i FROM generate_series(1, 20000) AS i;
INSERT INTO operations (run_pk, operation_id, step_id, tool, side_effect, state, attempt,
                        fingerprint, contract_hash, updated_at_us)
SELECT run_pk, 'op-' || run_pk, 'step', CASE run_pk % 2 WHEN 0 THEN 'charge' ELSE 'lookup' END,
       'idempotent_write', 'committed', 1, '', '', 0 FROM runs;
ANALYZE runs;
ANALYZE operations;
)sql";

class PgRunPagePlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(TestPostgres(), nullptr) << TestPostgresStartError();
    auto conninfo = FreshDatabase();
    ASSERT_TRUE(conninfo) << conninfo.error().ToString();
    {
      auto journal = OpenPostgresJournal(conninfo.value());  // the schema
      ASSERT_TRUE(journal) << journal.error().ToString();
    }
    auto conn = PgConnection::Connect(conninfo.value());
    ASSERT_TRUE(conn) << conn.error().ToString();
    conn_ = std::make_unique<PgConnection>(std::move(conn).value());
    ASSERT_TRUE(conn_->Exec(kFill));
  }

  // The plan of the page, one line per node.
  std::string Plan(const RunQuery& query) {
    const PgRunPageSql page = BuildPgRunPageSql(query);
    auto result = conn_->Query("EXPLAIN " + page.sql, page.params);
    EXPECT_TRUE(result) << result.error().ToString();
    std::string plan;
    if (!result) return plan;
    for (int row = 0; row < result.value().rows(); ++row) {
      plan += std::string(result.value().Text(row, 0)) + "\n";
    }
    return plan;
  }

  // An index scan in key order, stopped by the limit: no scan of every run, no sort of them.
  void ExpectIndexed(const RunQuery& query) {
    const std::string plan = Plan(query);
    EXPECT_NE(plan.find("Limit"), std::string::npos) << plan;
    EXPECT_NE(plan.find("Index"), std::string::npos) << plan;
    EXPECT_EQ(plan.find("Seq Scan on runs"), std::string::npos) << plan;
    EXPECT_EQ(plan.find("Sort"), std::string::npos) << plan;
  }

  std::unique_ptr<PgConnection> conn_;
};

TEST_F(PgRunPagePlanTest, PagesWalkAnIndexFromWhereThePreviousPageEnded) {
  ExpectIndexed({.limit = kLimit});
  ExpectIndexed({.before_run_pk = kRuns / 2, .limit = kLimit});
  EXPECT_NE(Plan({.before_run_pk = kRuns / 2, .limit = kLimit}).find("Index Scan Backward using runs_pkey"),
            std::string::npos)
      << Plan({.before_run_pk = kRuns / 2, .limit = kLimit});
  ExpectIndexed({.status = RunStatus::kCompleted, .before_run_pk = kRuns / 2, .limit = kLimit});
  ExpectIndexed({.status = RunStatus::kFailed, .before_run_pk = kRuns, .limit = kLimit});
  ExpectIndexed({.workflow_type = "refund", .before_run_pk = kRuns / 2, .limit = kLimit});
}

}  // namespace
}  // namespace reckon::storage
