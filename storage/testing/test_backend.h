// The storage backend a test process runs on, chosen by the environment variable
// RECKON_TEST_BACKEND: unset, empty or "sqlite": a SQLite file per test world (the default);
// "postgres": a database of its own per test world, on the one private PostgreSQL server of the
// process (postgres_test_env.h), started at the first need. Tests that hold for both backends
// (the engine behaviour tests, through EngineHarness) take their journal name from here and
// open it with storage::OpenJournal (storage/backend/open_backend.h).
//
// Stateless apart from the process's server; call from GoogleTest's main thread.
#pragma once

#include <string>

#include "reckon/base/error.h"
#include "tests/support/temp_dir.h"

namespace reckon::storage {

// True when RECKON_TEST_BACKEND=postgres. For GTEST_SKIP() of tests that only mean something
// on SQLite (they damage or inspect the file).
bool TestOnPostgres();

// A new, empty journal for one test world, as a name for storage::OpenJournal: the file
// `dir`/journal.db on SQLite, a fresh database's connection string on PostgreSQL. Errors:
// kInvalidArgument for an unknown RECKON_TEST_BACKEND; kFailedPrecondition when the test
// PostgreSQL cannot start (the reason names `./dev`).
Result<std::string> NewTestJournal(const testing::TempDir& dir);
// The same for fixtures and helpers: its error as a std::runtime_error, which GoogleTest
// reports as the test's failure.
std::string NewTestJournalOrThrow(const testing::TempDir& dir);

}  // namespace reckon::storage
