// The SQL of one page of runs (RunQuery, storage/rows.h) on the SQLite journal, with its
// parameters: built per query, so that each filter present is a plain predicate the planner
// can serve with an index, and paged by keyset on run_pk (the rowid), newest first. A page
// reads about its own rows however deep it is and however many runs the journal holds; never
// an OFFSET. storage/sqlite/run_page_plan_test.cc checks the plans and the rows visited.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "reckon/storage/rows.h"
#include "reckon/storage/sqlite/sqlite.h"

namespace reckon::storage {

struct RunPageSql {
  std::string sql;  // selects kRunColumns (journal_statements.h) of the page's runs
  std::vector<std::pair<int, std::string>> texts;  // parameter index, value
  std::vector<std::pair<int, std::int64_t>> ints;

  void BindTo(Statement& stmt) const;
};

RunPageSql BuildRunPageSql(const RunQuery& query);

}  // namespace reckon::storage
