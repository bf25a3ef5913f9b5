#include "reckon/storage/testing/postgres_test_env.h"

#include <gtest/gtest.h>

#include <memory>

namespace reckon::storage {
namespace {

class PostgresEnvironment final : public ::testing::Environment {
 public:
  testing::PostgresServer* Server() {
    if (!tried_) {
      tried_ = true;
      auto started = testing::PostgresServer::Start();
      if (started) {
        server_ = std::move(started).value();
      } else {
        error_ = started.error().ToString();
      }
    }
    return server_.get();
  }
  void TearDown() override { server_.reset(); }

  std::unique_ptr<testing::PostgresServer> server_;
  bool tried_ = false;
  std::string error_ = "the test PostgreSQL was not started";
  int databases_ = 0;
};

// Owned by GoogleTest once registered; lives for the whole binary.
PostgresEnvironment* const environment = static_cast<PostgresEnvironment*>(
    ::testing::AddGlobalTestEnvironment(new PostgresEnvironment));

}  // namespace

testing::PostgresServer* TestPostgres() { return environment->Server(); }
const std::string& TestPostgresStartError() { return environment->error_; }

Result<std::string> FreshDatabase() {
  if (TestPostgres() == nullptr) {
    return Err(Errc::kFailedPrecondition,
               "cannot start the test PostgreSQL: " + TestPostgresStartError());
  }
  return TestPostgres()->CreateDatabase("t" + std::to_string(++environment->databases_));
}

}  // namespace reckon::storage
