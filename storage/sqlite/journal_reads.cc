// SqliteJournal reads. Same threading rule as the rest of the Journal: one owner at a time.
#include <utility>

#include "reckon/base/enum_names.h"
#include "reckon/storage/sqlite/journal_statements.h"
#include "reckon/storage/sqlite/run_page_sql.h"
#include "reckon/storage/sqlite/sqlite_journal.h"

namespace reckon::storage {

Result<RunRow> ReadRun(const Statement& stmt) {
  RunRow row;
  row.run_pk = stmt.ColumnInt(0);
  row.ref.workflow_id = stmt.ColumnText(1);
  row.ref.run_id = stmt.ColumnText(2);
  row.workflow_type = stmt.ColumnText(3);
  RECKON_TRY(row.status, FromStored(ParseRunStatus(stmt.ColumnText(4)), "runs.status"));
  row.next_seq = stmt.ColumnInt(5);
  row.created_at_us = stmt.ColumnInt(6);
  row.updated_at_us = stmt.ColumnInt(7);
  return row;
}

Result<OperationRow> ReadOperation(const Statement& stmt) {
  OperationRow row;
  row.operation_id = stmt.ColumnText(0);
  row.step_id = stmt.ColumnText(1);
  row.tool = stmt.ColumnText(2);
  RECKON_TRY(row.side_effect,
             FromStored(ParseSideEffect(stmt.ColumnText(3)), "operations.side_effect"));
  row.state = stmt.ColumnText(4);
  row.attempt = stmt.ColumnInt(5);
  row.intent_hash = stmt.ColumnText(6);
  row.contract_hash = stmt.ColumnText(7);
  row.provider_ref = stmt.ColumnText(8);
  row.due_at_us = stmt.ColumnInt(9);
  row.run_pk = stmt.ColumnInt(10);
  row.updated_at_us = stmt.ColumnInt(11);
  return row;
}

namespace {

// Runs `stmt` (already bound) and collects every row with `read` (returning a Row or a
// Result<Row>); resets it afterwards.
template <class Row, class ReadFn>
Result<std::vector<Row>> Collect(Statement& stmt, ReadFn read) {
  std::vector<Row> rows;
  while (true) {
    auto more = stmt.Step();
    if (!more) {
      stmt.Reset();
      return more.error();
    }
    if (!more.value()) break;
    Result<Row> row = read(stmt);
    if (!row) {
      stmt.Reset();
      return row.error();
    }
    rows.push_back(std::move(row).value());
  }
  stmt.Reset();
  return rows;
}

template <class Row, class ReadFn>
Result<std::optional<Row>> CollectOne(Statement& stmt, ReadFn read) {
  RECKON_TRY(auto rows, Collect<Row>(stmt, read));
  if (rows.empty()) return std::optional<Row>();
  return std::optional<Row>(std::move(rows.front()));
}

}  // namespace

Result<std::optional<RunRow>> SqliteJournal::FindRun(const RunRef& run) {
  stmts_->find_run.Reset();
  stmts_->find_run.Bind(1, run.workflow_id).Bind(2, run.run_id);
  return CollectOne<RunRow>(stmts_->find_run, ReadRun);
}

Result<std::optional<RunRow>> SqliteJournal::FindLatestRun(const std::string& workflow_id) {
  stmts_->find_latest_run.Reset();
  stmts_->find_latest_run.Bind(1, workflow_id);
  return CollectOne<RunRow>(stmts_->find_latest_run, ReadRun);
}

Result<std::vector<RunRow>> SqliteJournal::ListRuns(std::optional<RunStatus> status) {
  if (!status) {
    stmts_->list_runs.Reset();
    return Collect<RunRow>(stmts_->list_runs, ReadRun);
  }
  stmts_->list_runs_by_status.Reset();
  stmts_->list_runs_by_status.Bind(1, RunStatusName(*status));
  return Collect<RunRow>(stmts_->list_runs_by_status, ReadRun);
}

Result<std::vector<RunRow>> SqliteJournal::QueryRuns(const RunQuery& query) {
  const RunPageSql page = BuildRunPageSql(query);  // run_page_sql.h: keyset, on indexes
  RECKON_TRY(Statement stmt, db_.Prepare(page.sql));
  page.BindTo(stmt);
  return Collect<RunRow>(stmt, ReadRun);
}

Result<std::vector<Event>> SqliteJournal::ReadEvents(const RunRef& run, std::int64_t from_seq) {
  RECKON_TRY(auto found, FindRun(run));
  std::vector<Event> events;
  if (!found) return events;
  Statement& stmt = stmts_->read_events;
  stmt.Reset();
  stmt.Bind(1, found->run_pk).Bind(2, from_seq);
  events.reserve(static_cast<std::size_t>(std::max<std::int64_t>(0, found->next_seq - from_seq)));
  while (true) {
    auto more = stmt.Step();
    if (!more) {
      stmt.Reset();
      return more.error();
    }
    if (!more.value()) break;
    auto body = decoder_.Decode(stmt.ColumnBlob(3),
                                EventPlace{run.workflow_id, run.run_id, stmt.ColumnInt(0)});
    if (!body) {
      Error error = body.error().WithContext(
          "run '" + run.workflow_id + "/" + run.run_id + "' event " +
          std::to_string(stmt.ColumnInt(0)));
      stmt.Reset();
      return error;
    }
    events.push_back(Event{stmt.ColumnInt(0), stmt.ColumnInt(2), std::move(body).value()});
  }
  stmt.Reset();
  return events;
}

Result<std::optional<OperationRow>> SqliteJournal::FindOperation(const std::string& operation_id) {
  stmts_->find_operation.Reset();
  stmts_->find_operation.Bind(1, operation_id);
  return CollectOne<OperationRow>(stmts_->find_operation, ReadOperation);
}

Result<std::vector<OperationRow>> SqliteJournal::ListOperations(std::int64_t run_pk) {
  stmts_->list_operations.Reset();
  stmts_->list_operations.Bind(1, run_pk);
  return Collect<OperationRow>(stmts_->list_operations, ReadOperation);
}

Result<void> SqliteJournal::PutContract(const ContractRow& row) {
  stmts_->put_contract.Reset();
  stmts_->put_contract.Bind(1, row.name).Bind(2, row.hash).Bind(3, row.contract_json)
      .Bind(4, row.registered_at_us);
  return stmts_->put_contract.Run();
}

Result<std::vector<ContractRow>> SqliteJournal::ListContracts() {
  stmts_->list_contracts.Reset();
  return Collect<ContractRow>(stmts_->list_contracts, [](const Statement& s) {
    return ContractRow{std::string(s.ColumnText(0)), std::string(s.ColumnText(1)),
                       std::string(s.ColumnText(2)), s.ColumnInt(3)};
  });
}

Result<std::string> SqliteJournal::IntegrityCheck() {
  RECKON_TRY(auto stmt, db_.Prepare("PRAGMA integrity_check"));
  std::string report;
  while (true) {
    RECKON_TRY(bool row, stmt.Step());
    if (!row) break;
    if (!report.empty()) report += "\n";
    report += stmt.ColumnText(0);
  }
  return report;
}

}  // namespace reckon::storage
