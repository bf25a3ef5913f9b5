#include "reckon/storage/sqlite/sqlite_principal_store.h"

#include <gtest/gtest.h>

#include "reckon/storage/sqlite/sqlite_journal.h"
#include "tests/support/temp_dir.h"

namespace reckon::storage {
namespace {

class SqlitePrincipalStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    journal_ = OpenSqliteJournal(dir_.File("j.db")).value();
    store_ = SqlitePrincipalStore::Open(dir_.File("j.db")).value();
  }
  static PrincipalRow Row(std::string name, std::string hash) {
    PrincipalRow row;
    row.name = std::move(name);
    row.role = "approver";
    row.scopes = {"tool:send_refund", "tool:payout"};
    row.token_hash = std::move(hash);
    row.created_at_us = 100;
    row.created_by = "admin";
    row.expires_at_us = 900;
    return row;
  }
  static AuditRow Audit(std::string action, std::string subject) {
    return AuditRow{100, "admin", std::move(action), std::move(subject), "{}"};
  }

  testing::TempDir dir_;
  std::unique_ptr<Journal> journal_;
  std::unique_ptr<SqlitePrincipalStore> store_;
};

TEST_F(SqlitePrincipalStoreTest, CreatesFindsByHashAndLists) {
  ASSERT_TRUE(store_->Create(Row("ann", "h1"), Audit("token_create", "ann")));
  auto found = store_->FindByTokenHash("h1");
  ASSERT_TRUE(found);
  ASSERT_TRUE(found.value().has_value());
  const PrincipalRow& ann = *found.value();
  EXPECT_EQ(ann.name, "ann");
  EXPECT_EQ(ann.role, "approver");
  EXPECT_EQ(ann.scopes, (std::vector<std::string>{"tool:send_refund", "tool:payout"}));
  EXPECT_EQ(ann.expires_at_us, 900);
  EXPECT_EQ(ann.revoked_at_us, 0);
  EXPECT_FALSE(store_->FindByTokenHash("h2").value().has_value());
  auto all = store_->List();
  ASSERT_TRUE(all);
  ASSERT_EQ(all.value().size(), 1u);
}

TEST_F(SqlitePrincipalStoreTest, ANameIsUniqueAmongLivePrincipalsAndFreeAgainAfterRevoke) {
  ASSERT_TRUE(store_->Create(Row("ann", "h1"), Audit("token_create", "ann")));
  auto twice = store_->Create(Row("ann", "h2"), Audit("token_create", "ann"));
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().code(), Errc::kAlreadyExists);
  EXPECT_NE(twice.error().message().find("revoke it first"), std::string::npos);

  auto revoked = store_->Revoke("ann", 200, "root", Audit("token_revoke", "ann"));
  ASSERT_TRUE(revoked);
  EXPECT_EQ(revoked.value().revoked_at_us, 200);
  EXPECT_EQ(revoked.value().token_hash, "h1");
  EXPECT_EQ(store_->FindByTokenHash("h1").value()->revoked_by, "root");
  auto again = store_->Revoke("ann", 300, "root", Audit("token_revoke", "ann"));
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), Errc::kNotFound);

  ASSERT_TRUE(store_->Create(Row("ann", "h2"), Audit("token_create", "ann")));
  EXPECT_EQ(store_->List().value().size(), 2u);  // the revoked one stays listed
  auto audit = store_->ReadAudit();
  ASSERT_TRUE(audit);
  ASSERT_EQ(audit.value().size(), 3u);  // create, revoke, create: the failed ones left none
  EXPECT_EQ(audit.value()[1].action, "token_revoke");
}

TEST_F(SqlitePrincipalStoreTest, AFailedCreateLeavesNoAuditRow) {
  ASSERT_TRUE(store_->Create(Row("ann", "h1"), Audit("token_create", "ann")));
  ASSERT_FALSE(store_->Create(Row("bob", "h1"), Audit("token_create", "bob")));  // same hash
  EXPECT_EQ(store_->ReadAudit().value().size(), 1u);
  EXPECT_EQ(store_->List().value().size(), 1u);
}

TEST_F(SqlitePrincipalStoreTest, RefusesAJournalWithoutThePrincipalsTable) {
  auto raw = SqliteDb::Open(dir_.File("plain.db"));
  ASSERT_TRUE(raw);
  ASSERT_TRUE(raw.value().Exec("CREATE TABLE t (x)"));
  auto store = SqlitePrincipalStore::Open(dir_.File("plain.db"));
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code(), Errc::kFailedPrecondition);
}

}  // namespace
}  // namespace reckon::storage
