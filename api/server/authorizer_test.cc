// Withdrawals (api/server/authorizer.h): two Authorizers over one principal store, as two
// servers of a cluster share one database. A revocation through one is handed to its own
// OnWithdrawn handler at once, and to the other's when its Recheck finds it (within the
// cache's ttl); an expiry is found by Recheck as soon as it passes. Each credential is
// withdrawn once.
#include "reckon/api/server/authorizer.h"

#include <gtest/gtest.h>

#include "reckon/auth/token.h"
#include "reckon/storage/sqlite/sqlite_journal.h"
#include "reckon/storage/sqlite/sqlite_principal_store.h"
#include "reckon/testkit/manual_clock.h"
#include "tests/support/temp_dir.h"

namespace reckon::api {
namespace {

using namespace std::chrono_literals;

struct Member {
  std::unique_ptr<storage::SqlitePrincipalStore> store;
  std::unique_ptr<Authorizer> authorizer;
  std::vector<Withdrawal> withdrawn;
};

class AuthorizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto journal = storage::SqliteJournal::Open(dir_.File("journal.db"));
    ASSERT_TRUE(journal) << journal.error().ToString();
    journal_ = std::move(journal).value();
    for (Member& member : members_) {
      auto store = storage::SqlitePrincipalStore::Open(dir_.File("journal.db"));
      ASSERT_TRUE(store) << store.error().ToString();
      member.store = std::move(store).value();
      member.authorizer =
          std::make_unique<Authorizer>(*member.store, clock_, AuthOptions{false, 5000ms, false});
      member.authorizer->OnWithdrawn(
          [&member](const Withdrawal& w) { member.withdrawn.push_back(w); });
    }
  }

  CreatedToken Create(const std::string& name, std::chrono::seconds expires_in = {}) {
    const auth::Principal admin{"admin", {auth::Role::kAdmin}, {}, {}, 0};
    auto created = members_[0].authorizer->CreateToken(
        admin, NewToken{name, {auth::Role::kWorker}, {}, {}, expires_in});
    EXPECT_TRUE(created) << created.error().ToString();
    return created ? std::move(created).value() : CreatedToken{};
  }

  testing::TempDir dir_;
  std::unique_ptr<storage::SqliteJournal> journal_;
  testkit::ManualClock clock_;
  Member members_[2];
};

TEST_F(AuthorizerTest, ARevocationThroughAnotherServerIsFoundByRecheckWithinTheTtl) {
  const CreatedToken rogue = Create("rogue");
  const std::string hash = auth::TokenHash(rogue.token);
  for (Member& member : members_) {
    auto admitted = member.authorizer->Authenticate(rogue.token);
    ASSERT_TRUE(admitted) << admitted.error().ToString();
    EXPECT_EQ(admitted.value().token_hash, hash);
  }
  const auth::Principal admin{"admin", {auth::Role::kAdmin}, {}, {}, 0};
  ASSERT_TRUE(members_[0].authorizer->Revoke(admin, "rogue"));
  // The server that revoked it: at once, once.
  ASSERT_EQ(members_[0].withdrawn.size(), 1u);
  EXPECT_EQ(members_[0].withdrawn[0].token_hash, hash);
  EXPECT_EQ(members_[0].withdrawn[0].principal, "rogue");
  EXPECT_EQ(members_[0].withdrawn[0].reason.code(), Errc::kUnauthenticated);
  members_[0].authorizer->Recheck({hash});
  EXPECT_EQ(members_[0].withdrawn.size(), 1u);
  // The other: its cached entry is fresh, so not yet; once it is older than the ttl, its
  // recheck reloads it and finds the revocation.
  members_[1].authorizer->Recheck({hash});
  EXPECT_TRUE(members_[1].withdrawn.empty());
  clock_.Advance(5s);
  members_[1].authorizer->Recheck({hash});
  ASSERT_EQ(members_[1].withdrawn.size(), 1u);
  EXPECT_NE(members_[1].withdrawn[0].reason.message().find("'rogue' was revoked"),
            std::string::npos)
      << members_[1].withdrawn[0].reason.message();
  clock_.Advance(5s);
  members_[1].authorizer->Recheck({hash});
  auto refused = members_[1].authorizer->Authenticate(rogue.token);
  ASSERT_FALSE(refused);
  EXPECT_EQ(members_[1].withdrawn.size(), 1u) << "withdrawn once";
}

TEST_F(AuthorizerTest, AnExpiryIsFoundByRecheckAsSoonAsItPasses) {
  const CreatedToken brief = Create("brief", 10s);
  const CreatedToken lasting = Create("lasting");
  Member& member = members_[1];
  ASSERT_TRUE(member.authorizer->Authenticate(brief.token));
  ASSERT_TRUE(member.authorizer->Authenticate(lasting.token));
  const std::vector<std::string> open = {auth::TokenHash(brief.token),
                                         auth::TokenHash(lasting.token)};
  clock_.Advance(9s);
  member.authorizer->Recheck(open);
  EXPECT_TRUE(member.withdrawn.empty());
  clock_.Advance(1s);
  member.authorizer->Recheck(open);
  ASSERT_EQ(member.withdrawn.size(), 1u);
  EXPECT_EQ(member.withdrawn[0].principal, "brief");
  EXPECT_NE(member.withdrawn[0].reason.message().find("has expired"), std::string::npos);
}

}  // namespace
}  // namespace reckon::api
