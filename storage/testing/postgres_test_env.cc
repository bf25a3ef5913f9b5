#include "reckon/storage/testing/postgres_test_env.h"

#include <gtest/gtest.h>

#include <memory>

namespace reckon::storage {
namespace {

class PostgresEnvironment final : public ::testing::Environment {
 public:
  void SetUp() override {
    auto started = testing::PostgresServer::Start();
    if (!started) {
      error_ = started.error().ToString();
      FAIL() << "cannot start the test PostgreSQL: " << error_;
    }
    server_ = std::move(started).value();
  }
  void TearDown() override { server_.reset(); }

  std::unique_ptr<testing::PostgresServer> server_;
  std::string error_ = "the test PostgreSQL was not started";
  int databases_ = 0;
};

// Owned by GoogleTest once registered; lives for the whole binary.
PostgresEnvironment* const environment = static_cast<PostgresEnvironment*>(
    ::testing::AddGlobalTestEnvironment(new PostgresEnvironment));

}  // namespace

testing::PostgresServer* TestPostgres() { return environment->server_.get(); }
const std::string& TestPostgresStartError() { return environment->error_; }

Result<std::string> FreshDatabase() {
  if (TestPostgres() == nullptr) {
    return Err(Errc::kFailedPrecondition, "no test PostgreSQL: " + TestPostgresStartError());
  }
  return TestPostgres()->CreateDatabase("t" + std::to_string(++environment->databases_));
}

}  // namespace reckon::storage
