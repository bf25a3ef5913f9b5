// The journal conformance suite: the behaviour every Journal backend must share (storage/
// journal.h), written once as a value-parameterized GoogleTest suite and instantiated by each
// backend's test binary with a JournalBackend for it:
//
//   INSTANTIATE_TEST_SUITE_P(Sqlite, JournalConformanceTest,
//                            ::testing::Values(JournalBackendParam{"sqlite", MakeSqlite}),
//                            JournalBackendName);
//
// The tests (journal_conformance_test.cc and store_conformance_test.cc, compiled into each such
// binary) cover the append and read round trip, the conditional append, groups with a
// conflicting request, group commit, derived rows, QueryRuns' filters and paging, contracts,
// reopening and the schema version; the outbox and principal stores beside the journal; and
// retention (retention_conformance_test.cc: ListArchivable, DeleteRun). What only one
// backend has (SQLite's lock file and page checks, PostgreSQL's lost connections) is tested
// beside that backend.
//
// Test support only. A JournalBackend belongs to one test; not thread-safe.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "reckon/base/error.h"
#include "reckon/storage/journal.h"
#include "reckon/storage/outbox_store.h"
#include "reckon/storage/payload_codec.h"
#include "reckon/storage/principal_store.h"

namespace reckon::storage {

class JournalBackend {
 public:
  virtual ~JournalBackend() = default;
  // A fresh, empty journal of this test's own (a new file, a new database), as its owner;
  // `codec` (not owned, may be null) seals payloads as the backend's options say.
  virtual Result<std::unique_ptr<Journal>> Open(const PayloadCodec* codec) = 0;
  // The same journal opened again; the caller has closed the previous one first.
  virtual Result<std::unique_ptr<Journal>> Reopen(const PayloadCodec* codec) = 0;
  // The journal's outbox and principal stores, on connections of their own.
  virtual Result<std::unique_ptr<OutboxStore>> OpenOutboxStore(const PayloadCodec* codec) = 0;
  virtual Result<std::unique_ptr<PrincipalStore>> OpenPrincipalStore() = 0;
  // The single integer `sql` yields, read from the journal's storage by a connection of its
  // own (so it sees what is committed): for the derived tables no Journal read returns.
  virtual Result<std::int64_t> QueryInt(const std::string& sql) = 0;
  // The schema version this release's migrations end at.
  virtual int newest_schema_version() const = 0;
};

struct JournalBackendParam {
  std::string name;  // a test-name suffix: letters and digits
  std::function<std::unique_ptr<JournalBackend>()> make;
  friend void PrintTo(const JournalBackendParam& param, std::ostream* out) { *out << param.name; }
};

inline std::string JournalBackendName(
    const ::testing::TestParamInfo<JournalBackendParam>& info) {
  return info.param.name;
}

// The fixture: a fresh journal of the backend per test.
class JournalConformanceTest : public ::testing::TestWithParam<JournalBackendParam> {
 protected:
  void SetUp() override {
    backend_ = GetParam().make();
    ASSERT_NE(backend_, nullptr);
    auto opened = backend_->Open(nullptr);
    ASSERT_TRUE(opened) << opened.error().ToString();
    journal_ = std::move(opened).value();
  }
  // For derived tables: -1 (and a test failure) when the query fails.
  std::int64_t Count(const std::string& sql) {
    auto count = backend_->QueryInt(sql);
    EXPECT_TRUE(count) << count.error().ToString();
    return count ? count.value() : -1;
  }

  std::unique_ptr<JournalBackend> backend_;
  std::unique_ptr<Journal> journal_;
};

}  // namespace reckon::storage
