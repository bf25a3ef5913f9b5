#include "reckon/storage/postgres/run_page_sql.h"

#include "reckon/base/enum_names.h"
#include "reckon/storage/postgres/journal_statements.h"

namespace reckon::storage {

PgRunPageSql BuildPgRunPageSql(const RunQuery& query) {
  PgRunPageSql out;
  std::string& sql = out.sql;
  PgParams& params = out.params;
  const bool by_tool = !query.tool.empty();
  sql = std::string("SELECT ") + pg::kQualifiedRunColumns +
        (by_tool ? " FROM operations o JOIN runs r ON r.run_pk = o.run_pk "
                   "WHERE o.tool = $1::text"
                 : " FROM runs r WHERE true");
  int n = 0;
  if (by_tool) {
    params.Add(query.tool);
    ++n;
  }
  auto next = [&n](const char* type) { return "$" + std::to_string(++n) + "::" + type; };
  if (query.status) {
    sql += " AND r.status = " + next("text");
    params.Add(RunStatusName(*query.status));
  }
  if (!query.workflow_type.empty()) {
    sql += " AND r.workflow_type = " + next("text");
    params.Add(query.workflow_type);
  }
  if (!query.id_prefix.empty()) {
    // A range on the (workflow_id, run_id) index, byte order (COLLATE "C"): ids >= prefix and
    // < prefix + U+10FFFF.
    sql += " AND r.workflow_id >= " + next("text");
    params.Add(query.id_prefix);
    sql += " AND r.workflow_id < " + next("text");
    params.Add(query.id_prefix + "\xf4\x8f\xbf\xbf");
  }
  if (query.needs_human) {
    sql += " AND r.run_pk IN (SELECT run_pk FROM operations WHERE state IN "
           "('awaiting_approval', 'needs_human'))";
  }
  if (query.before_run_pk > 0) {
    sql += " AND r.run_pk < " + next("bigint");
    params.Add(query.before_run_pk);
  }
  // A run with several operations of the tool appears once (run_pk is the key of runs, so
  // grouping by it carries the other columns).
  if (by_tool) sql += " GROUP BY r.run_pk";
  sql += " ORDER BY r.run_pk DESC LIMIT " + next("bigint");
  params.Add(static_cast<std::int64_t>(query.limit));
  return out;
}

}  // namespace reckon::storage
