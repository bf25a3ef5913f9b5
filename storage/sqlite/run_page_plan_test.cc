// Pages of runs (BuildRunPageSql, run_page_sql.h) on a journal of 20,000 runs: each page is
// served by an index in key order (EXPLAIN QUERY PLAN: a SEARCH on the rowid or an index, no
// temporary B-tree to sort), and running it visits about the page's rows, not the table
// (sqlite3_stmt_status: rows stepped in full scans, virtual machine steps, sorts), however deep
// the page. What `reckon list` and the console ask for on a journal of a million runs.
#include "reckon/storage/sqlite/run_page_sql.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "reckon/storage/sqlite/schema.h"
#include "tests/support/temp_dir.h"

namespace reckon::storage {
namespace {

constexpr int kRuns = 20000;
constexpr std::size_t kLimit = 50;

// Every run; one in 3 completed, one in 100 failed, the rest running; one in 4 of type
// "refund"; one operation per run, of tool "charge" for one in 2 (else "lookup").
constexpr const char* kFill = R"sql(
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
INSERT INTO runs (run_pk, workflow_id, run_id, workflow_type, status, next_seq, created_at_us,
                  updated_at_us)
SELECT i, 'wf-' || i, 'run-' || i, CASE i % 4 WHEN 0 THEN 'refund' ELSE 'payment' END,
       CASE WHEN i % 100 = 0 THEN 'failed' WHEN i % 3 = 0 THEN 'completed' ELSE 'running' END,
       1, i, i FROM n;
INSERT INTO operations (run_pk, operation_id, step_id, tool, side_effect, state, attempt,
                        fingerprint, contract_hash, updated_at_us)
SELECT run_pk, 'op-' || run_pk, 'step', CASE run_pk % 2 WHEN 0 THEN 'charge' ELSE 'lookup' END,
       'idempotent_write', 'committed', 1, '', '', 0 FROM runs;
)sql";

struct Cost {
  std::vector<std::string> plan;  // EXPLAIN QUERY PLAN details
  int rows = 0;                   // rows the page returned
  int fullscan_steps = 0;         // SQLITE_STMTSTATUS_FULLSCAN_STEP
  int vm_steps = 0;               // SQLITE_STMTSTATUS_VM_STEP
  int sorts = 0;                  // SQLITE_STMTSTATUS_SORT
  std::string Describe() const {
    std::string out = "rows " + std::to_string(rows) + ", full-scan steps " +
                      std::to_string(fullscan_steps) + ", vm steps " + std::to_string(vm_steps) +
                      ", sorts " + std::to_string(sorts) + "; plan:";
    for (const std::string& line : plan) out += "\n  " + line;
    return out;
  }
};

void Bind(sqlite3_stmt* stmt, const RunPageSql& page) {
  for (const auto& [index, text] : page.texts) {
    sqlite3_bind_text(stmt, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  for (const auto& [index, value] : page.ints) sqlite3_bind_int64(stmt, index, value);
}

class RunPagePlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = SqliteDb::Open(dir_.File("journal.db"));
    ASSERT_TRUE(db) << db.error().ToString();
    db_ = std::make_unique<SqliteDb>(std::move(db).value());
    ASSERT_TRUE(MigrateForward(*db_, JournalMigrations()));
    ASSERT_TRUE(db_->Exec(std::string("BEGIN;") + kFill + "COMMIT;"));
  }

  Cost Run(const RunQuery& query) {
    const RunPageSql page = BuildRunPageSql(query);
    Cost cost;
    sqlite3_stmt* stmt = nullptr;
    const std::string explain = "EXPLAIN QUERY PLAN " + page.sql;
    EXPECT_EQ(sqlite3_prepare_v2(db_->handle(), explain.c_str(), -1, &stmt, nullptr), SQLITE_OK);
    Bind(stmt, page);
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      cost.plan.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 3)));
    }
    sqlite3_finalize(stmt);
    EXPECT_EQ(sqlite3_prepare_v2(db_->handle(), page.sql.c_str(), -1, &stmt, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db_->handle());
    Bind(stmt, page);
    while (sqlite3_step(stmt) == SQLITE_ROW) ++cost.rows;
    cost.fullscan_steps = sqlite3_stmt_status(stmt, SQLITE_STMTSTATUS_FULLSCAN_STEP, 0);
    cost.vm_steps = sqlite3_stmt_status(stmt, SQLITE_STMTSTATUS_VM_STEP, 0);
    cost.sorts = sqlite3_stmt_status(stmt, SQLITE_STMTSTATUS_SORT, 0);
    sqlite3_finalize(stmt);
    return cost;
  }

  // The page cost its rows: no sort, no temporary B-tree, at most a page's worth of rows
  // stepped through in scans (a scan in key order stops at the limit), and a number of
  // machine steps that grows with the page, not with the 20,000 runs.
  void ExpectPageSized(const RunQuery& query, std::size_t rows_scanned_per_row = 1) {
    const Cost cost = Run(query);
    EXPECT_EQ(cost.rows, static_cast<int>(kLimit)) << cost.Describe();
    EXPECT_EQ(cost.sorts, 0) << cost.Describe();
    for (const std::string& line : cost.plan) {
      EXPECT_EQ(line.find("TEMP B-TREE"), std::string::npos) << cost.Describe();
    }
    EXPECT_LE(cost.fullscan_steps, static_cast<int>(kLimit * rows_scanned_per_row))
        << cost.Describe();
    EXPECT_LT(cost.vm_steps, static_cast<int>(200 * kLimit * rows_scanned_per_row))
        << cost.Describe();
  }

  testing::TempDir dir_;
  std::unique_ptr<SqliteDb> db_;
};

TEST_F(RunPagePlanTest, APageOfAllRunsWalksTheKeyFromWhereThePreviousPageEnded) {
  RunQuery first{.limit = kLimit};
  ExpectPageSized(first);
  RunQuery deep{.before_run_pk = kRuns / 2, .limit = kLimit};
  ExpectPageSized(deep);
  const Cost cost = Run(deep);
  ASSERT_FALSE(cost.plan.empty());
  EXPECT_NE(cost.plan[0].find("SEARCH r USING INTEGER PRIMARY KEY (rowid<?)"), std::string::npos)
      << cost.Describe();
}

TEST_F(RunPagePlanTest, FilteredPagesUseTheirIndexes) {
  ExpectPageSized({.status = RunStatus::kCompleted, .before_run_pk = kRuns / 2, .limit = kLimit},
                  3);
  ExpectPageSized({.status = RunStatus::kFailed, .before_run_pk = kRuns, .limit = kLimit});
  ExpectPageSized({.workflow_type = "refund", .before_run_pk = kRuns / 2, .limit = kLimit}, 4);
  ExpectPageSized({.tool = "charge", .before_run_pk = kRuns / 2, .limit = kLimit});
}

}  // namespace
}  // namespace reckon::storage
