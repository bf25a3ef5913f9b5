#include "reckon/storage/testing/test_backend.h"

#include <cstdlib>
#include <stdexcept>

#include "reckon/storage/testing/postgres_test_env.h"

namespace reckon::storage {
namespace {

std::string BackendVariable() {
  const char* value = std::getenv("RECKON_TEST_BACKEND");
  return value == nullptr ? std::string() : std::string(value);
}

}  // namespace

bool TestOnPostgres() { return BackendVariable() == "postgres"; }

Result<std::string> NewTestJournal(const testing::TempDir& dir) {
  const std::string backend = BackendVariable();
  if (backend.empty() || backend == "sqlite") return dir.File("journal.db");
  if (backend == "postgres") return FreshDatabase();
  return Err(Errc::kInvalidArgument, "RECKON_TEST_BACKEND=" + backend +
                                         " is not a backend: unset it, or set sqlite or postgres");
}

std::string NewTestJournalOrThrow(const testing::TempDir& dir) {
  auto name = NewTestJournal(dir);
  if (!name) throw std::runtime_error("cannot create the test journal: " + name.error().ToString());
  return std::move(name).value();
}

}  // namespace reckon::storage
