// The PostgreSQL server of one test binary (tests/support/postgres_server.h), started once by
// a GoogleTest environment before the first test and stopped after the last. Each test takes a
// database of its own with FreshDatabase().
//
// If the server cannot start (PostgreSQL not installed), the environment fails the binary and
// every test fails at SetUp with the reason, which names `./dev`.
#pragma once

#include <string>

#include "reckon/base/error.h"
#include "tests/support/postgres_server.h"

namespace reckon::storage {

// The binary's server; null (and Start's error in StartError()) if it did not start.
testing::PostgresServer* TestPostgres();
const std::string& TestPostgresStartError();

// A new, empty database on TestPostgres(), named after a counter: its connection string.
Result<std::string> FreshDatabase();

}  // namespace reckon::storage
