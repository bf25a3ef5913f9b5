// The SQL of one page of runs (RunQuery, storage/rows.h) on the PostgreSQL journal, with its
// parameters: built per query, so that each filter present is a plain predicate an index can
// serve (runs by key, status or type; operations by tool; the partial index of waiting
// operations), and paged by keyset on run_pk, newest first: a page reads about its own rows
// however deep it is; never an OFFSET. storage/postgres/run_page_plan_test.cc checks the plans.
#pragma once

#include <string>

#include "reckon/storage/postgres/pg.h"
#include "reckon/storage/rows.h"

namespace reckon::storage {

struct PgRunPageSql {
  std::string sql;  // selects kQualifiedRunColumns (journal_statements.h) of the page's runs
  PgParams params;
};

PgRunPageSql BuildPgRunPageSql(const RunQuery& query);

}  // namespace reckon::storage
