#include "reckon/storage/sqlite/run_page_sql.h"

#include <string_view>

#include "reckon/base/enum_names.h"
#include "reckon/storage/sqlite/journal_statements.h"

namespace reckon::storage {

namespace {

// kRunColumns with each column qualified by the table alias "r.".
const std::string& QualifiedRunColumns() {
  static const std::string kQualified = [] {
    std::string out;
    std::string_view columns = kRunColumns;
    while (!columns.empty()) {
      const std::size_t comma = columns.find(',');
      std::string_view column = columns.substr(0, comma);
      while (!column.empty() && column.front() == ' ') column.remove_prefix(1);
      out += (out.empty() ? "r." : ", r.") + std::string(column);
      if (comma == std::string_view::npos) break;
      columns.remove_prefix(comma + 1);
    }
    return out;
  }();
  return kQualified;
}

}  // namespace

void RunPageSql::BindTo(Statement& stmt) const {
  for (const auto& [index, text] : texts) stmt.Bind(index, text);
  for (const auto& [index, value] : ints) stmt.Bind(index, value);
}

RunPageSql BuildRunPageSql(const RunQuery& query) {
  // With a tool, the query walks operations_by_tool (tool, run_pk) backwards and joins each
  // run: a page costs its rows, however many runs have the tool. Otherwise it walks runs
  // backwards by key, with the status, type and id-prefix filters on their indexes and the
  // "needs a person" filter on the small partial index of waiting operations.
  RunPageSql out;
  const bool by_tool = !query.tool.empty();
  out.sql = "SELECT " + QualifiedRunColumns() +
            (by_tool ? " FROM operations o INDEXED BY operations_by_tool "
                       "JOIN runs r ON r.run_pk = o.run_pk WHERE o.tool = ?1"
                     : " FROM runs r WHERE 1");
  const std::string key = by_tool ? "o.run_pk" : "r.run_pk";
  int n = by_tool ? 1 : 0;
  if (by_tool) out.texts.emplace_back(1, query.tool);
  if (query.status) {
    out.sql += " AND r.status = ?" + std::to_string(++n);
    out.texts.emplace_back(n, std::string(RunStatusName(*query.status)));
  }
  if (!query.workflow_type.empty()) {
    out.sql += " AND r.workflow_type = ?" + std::to_string(++n);
    out.texts.emplace_back(n, query.workflow_type);
  }
  if (!query.id_prefix.empty()) {
    // A range on the (workflow_id, run_id) index: ids >= prefix and < prefix + U+10FFFF.
    out.sql += " AND r.workflow_id >= ?" + std::to_string(++n);
    out.texts.emplace_back(n, query.id_prefix);
    out.sql += " AND r.workflow_id < ?" + std::to_string(++n);
    out.texts.emplace_back(n, query.id_prefix + "\xf4\x8f\xbf\xbf");
  }
  if (query.needs_human) {
    out.sql += " AND r.run_pk IN (SELECT run_pk FROM operations WHERE state IN "
               "('awaiting_approval', 'needs_human'))";
  }
  if (query.before_run_pk > 0) {
    out.sql += " AND " + key + " < ?" + std::to_string(++n);
    out.ints.emplace_back(n, query.before_run_pk);
  }
  // A run with several operations of the tool appears once.
  if (by_tool) out.sql += " GROUP BY o.run_pk";
  out.sql += " ORDER BY " + key + " DESC LIMIT ?" + std::to_string(++n);
  out.ints.emplace_back(n, static_cast<std::int64_t>(query.limit));
  return out;
}

}  // namespace reckon::storage
