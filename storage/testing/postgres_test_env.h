// The PostgreSQL server of one test binary (tests/support/postgres_server.h): started on first
// use (the first TestPostgres() or FreshDatabase() call), so a binary that links this but runs
// on SQLite starts none, and stopped by a GoogleTest environment after the last test. Each
// test takes a database of its own with FreshDatabase().
//
// If the server cannot start (PostgreSQL not installed), the first caller gets the reason,
// which names `./dev`, and so does every later one: each test that needs it fails with it.
// Not thread-safe: tests call it from GoogleTest's main thread (the server dies with the
// thread that started it).
#pragma once

#include <string>

#include "reckon/base/error.h"
#include "tests/support/postgres_server.h"

namespace reckon::storage {

// The binary's server, started now if it was not; null (and the reason in
// TestPostgresStartError()) if it could not start.
testing::PostgresServer* TestPostgres();
const std::string& TestPostgresStartError();

// A new, empty database on TestPostgres(), named after a counter: its connection string.
Result<std::string> FreshDatabase();

}  // namespace reckon::storage
