// PostgresJournal reads. Same threading rule as the rest of the Journal: one owner at a time.
#include <algorithm>
#include <utility>

#include "reckon/storage/postgres/journal_statements.h"
#include "reckon/storage/postgres/postgres_journal.h"
#include "reckon/storage/postgres/run_page_sql.h"

namespace reckon::storage {
namespace {

// Every row of `result`, read with `read` (returning a Result<Row>).
template <class Row, class ReadFn>
Result<std::vector<Row>> Collect(const PgResult& result, ReadFn read) {
  std::vector<Row> rows;
  rows.reserve(static_cast<std::size_t>(result.rows()));
  for (int i = 0; i < result.rows(); ++i) {
    RECKON_TRY(Row row, read(result, i));
    rows.push_back(std::move(row));
  }
  return rows;
}

template <class Row, class ReadFn>
Result<std::optional<Row>> CollectOne(const PgResult& result, ReadFn read) {
  if (result.rows() == 0) return std::optional<Row>();
  RECKON_TRY(Row row, read(result, 0));
  return std::optional<Row>(std::move(row));
}

}  // namespace

Result<std::optional<RunRow>> PostgresJournal::FindRun(const RunRef& run) {
  PgParams params;
  params.Add(run.workflow_id).Add(run.run_id);
  RECKON_TRY(PgResult result, conn_.Run(pg::kFindRun, params));
  return CollectOne<RunRow>(result, pg::ReadRun);
}

Result<std::optional<RunRow>> PostgresJournal::FindLatestRun(const std::string& workflow_id) {
  PgParams params;
  params.Add(workflow_id);
  RECKON_TRY(PgResult result, conn_.Run(pg::kFindLatestRun, params));
  return CollectOne<RunRow>(result, pg::ReadRun);
}

Result<std::vector<RunRow>> PostgresJournal::ListRuns(std::optional<RunStatus> status) {
  PgParams params;
  if (status) params.Add(RunStatusName(*status));
  RECKON_TRY(PgResult result, conn_.Run(status ? pg::kListRunsByStatus : pg::kListRuns, params));
  return Collect<RunRow>(result, pg::ReadRun);
}

Result<std::vector<RunRow>> PostgresJournal::QueryRuns(const RunQuery& query) {
  const PgRunPageSql page = BuildPgRunPageSql(query);  // run_page_sql.h: keyset, on indexes
  RECKON_TRY(PgResult result, conn_.Query(page.sql, page.params));
  return Collect<RunRow>(result, pg::ReadRun);
}

Result<std::vector<Event>> PostgresJournal::ReadEvents(const RunRef& run,
                                                       std::int64_t from_seq) {
  RECKON_TRY(auto found, FindRun(run));
  std::vector<Event> events;
  if (!found) return events;
  PgParams params;
  params.Add(found->run_pk).Add(from_seq);
  RECKON_TRY(PgResult result, conn_.Run(pg::kReadEvents, params));
  events.reserve(static_cast<std::size_t>(result.rows()));
  for (int i = 0; i < result.rows(); ++i) {
    const std::int64_t seq = result.Int(i, 0);
    auto body = decoder_.Decode(result.Bytes(i, 3), EventPlace{run.workflow_id, run.run_id, seq});
    if (!body) {
      return body.error().WithContext("run '" + run.workflow_id + "/" + run.run_id +
                                      "' event " + std::to_string(seq));
    }
    events.push_back(Event{seq, result.Int(i, 2), std::move(body).value()});
  }
  return events;
}

Result<std::optional<OperationRow>> PostgresJournal::FindOperation(
    const std::string& operation_id) {
  PgParams params;
  params.Add(operation_id);
  RECKON_TRY(PgResult result, conn_.Run(pg::kFindOperation, params));
  return CollectOne<OperationRow>(result, pg::ReadOperation);
}

Result<std::vector<OperationRow>> PostgresJournal::ListOperations(std::int64_t run_pk) {
  PgParams params;
  params.Add(run_pk);
  RECKON_TRY(PgResult result, conn_.Run(pg::kListOperations, params));
  return Collect<OperationRow>(result, pg::ReadOperation);
}

Result<void> PostgresJournal::PutContract(const ContractRow& row) {
  PgParams params;
  params.Add(row.name).Add(row.hash).Add(row.contract_json).Add(row.registered_at_us);
  RECKON_TRY(conn_.Run(pg::kPutContract, params));
  return Ok();
}

Result<std::vector<ContractRow>> PostgresJournal::ListContracts() {
  RECKON_TRY(PgResult result, conn_.Run(pg::kListContracts, {}));
  return Collect<ContractRow>(result, [](const PgResult& r, int i) -> Result<ContractRow> {
    return ContractRow{std::string(r.Text(i, 0)), std::string(r.Text(i, 1)),
                       std::string(r.Text(i, 2)), r.Int(i, 3)};
  });
}

Result<std::string> PostgresJournal::IntegrityCheck() {
  // One problem per row, at most 20.
  static const std::string kProblems = R"sql(
(SELECT 'run ' || r.workflow_id || '/' || r.run_id || ': next_seq ' || r.next_seq ||
        ' but ' || coalesce(e.n, 0) || ' events numbered up to ' || coalesce(e.top, 0)
   FROM runs r LEFT JOIN (SELECT run_pk, count(*) AS n, max(seq) AS top, min(seq) AS low
                            FROM events GROUP BY run_pk) e ON e.run_pk = r.run_pk
  WHERE r.next_seq <> coalesce(e.top, 0) + 1 OR coalesce(e.n, 0) <> r.next_seq - 1
     OR coalesce(e.low, 1) <> 1)
UNION ALL
(SELECT 'table ' || t.name || ': rows of run_pk ' || t.run_pk || ', which is no run'
   FROM (SELECT 'events' AS name, run_pk FROM events
         UNION SELECT 'operations', run_pk FROM operations
         UNION SELECT 'timers', run_pk FROM timers
         UNION SELECT 'approvals', run_pk FROM approvals) t
  WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.run_pk = t.run_pk))
LIMIT 20)sql";
  RECKON_TRY(PgResult result, conn_.Query(kProblems));
  if (result.rows() == 0) return std::string("ok");
  std::string report;
  for (int i = 0; i < result.rows(); ++i) {
    if (!report.empty()) report += "\n";
    report += result.Text(i, 0);
  }
  return report;
}

}  // namespace reckon::storage
