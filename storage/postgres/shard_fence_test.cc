// Cluster mode at the storage layer: the shard leases (storage/postgres/shard_leases.h) and the
// epoch fence every append of a cluster member passes (storage/shard_fence.h). Two "servers"
// here are two lease clients and two journals on one private PostgreSQL.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "reckon/storage/postgres/pg.h"
#include "reckon/storage/postgres/postgres_journal.h"
#include "reckon/storage/postgres/shard_leases.h"
#include "reckon/storage/shard.h"
#include "reckon/storage/shard_fence.h"
#include "reckon/storage/testing/journal_requests.h"
#include "reckon/storage/testing/postgres_test_env.h"

namespace reckon::storage {
namespace {

using std::chrono::milliseconds;

class ShardFenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(TestPostgres(), nullptr) << TestPostgresStartError();
    auto conninfo = FreshDatabase();
    ASSERT_TRUE(conninfo) << conninfo.error().ToString();
    conninfo_ = conninfo.value();
  }
  // A cluster member's journal (which also migrates the database to the lease tables).
  std::unique_ptr<Journal> Member(const ShardFence& fence, milliseconds lease = milliseconds(3000)) {
    PostgresJournalOptions options;
    options.mode = PostgresJournalOptions::Mode::kClusterMember;
    options.fence = &fence;
    options.lease = lease;
    auto journal = OpenPostgresJournal(conninfo_, options);
    EXPECT_TRUE(journal) << journal.error().ToString();
    return journal ? std::move(journal).value() : nullptr;
  }
  std::unique_ptr<ShardLeases> Leases() {
    auto leases = ShardLeases::Open(conninfo_);
    EXPECT_TRUE(leases) << leases.error().ToString();
    return leases ? std::move(leases).value() : nullptr;
  }
  std::int64_t Events(const std::string& workflow_id) {
    auto conn = PgConnection::Connect(conninfo_);
    EXPECT_TRUE(conn);
    PgParams p;
    p.Add(workflow_id);
    auto r = conn.value().Query("SELECT count(*)::bigint FROM events e JOIN runs r ON "
                                "r.run_pk = e.run_pk WHERE r.workflow_id = $1::text", p);
    EXPECT_TRUE(r) << r.error().ToString();
    return r ? r.value().Int(0, 0) : -1;
  }
  std::string conninfo_;
};

TEST(ShardOfTest, IsStableAndSpreadsIds) {
  // The function is part of the stored format: these values must never change.
  EXPECT_EQ(ShardOf("refund-0"), 18);
  EXPECT_EQ(ShardOf("refund-1"), 5);
  EXPECT_EQ(ShardOf(""), static_cast<int>(14695981039346656037ull % kShardCount));
  std::vector<int> per_shard(kShardCount, 0);
  for (int i = 0; i < 6400; ++i) ++per_shard[ShardOf("wf-" + std::to_string(i))];
  for (int count : per_shard) {
    EXPECT_GT(count, 50);
    EXPECT_LT(count, 150);
  }
}

TEST_F(ShardFenceTest, AcquireTakesFreeShardsAndRaisesTheirEpochs) {
  ShardFence fence("a");
  auto journal = Member(fence);  // migrates
  auto a = Leases();
  auto b = Leases();
  ASSERT_TRUE(journal && a && b);
  auto got_a = a->Acquire("a", "127.0.0.1:1", {}, 40, milliseconds(60000));
  ASSERT_TRUE(got_a) << got_a.error().ToString();
  EXPECT_EQ(got_a.value().size(), 40u);
  for (const HeldShard& h : got_a.value()) EXPECT_EQ(h.epoch, 1);
  // B gets only what is left; A's unexpired leases are not taken.
  auto got_b = b->Acquire("b", "127.0.0.1:2", {}, 64, milliseconds(60000));
  ASSERT_TRUE(got_b);
  EXPECT_EQ(got_b.value().size(), 24u);
  auto table = a->List();
  ASSERT_TRUE(table);
  ASSERT_EQ(table.value().size(), static_cast<std::size_t>(kShardCount));
  int owned_by_a = 0;
  for (const ShardLease& lease : table.value()) {
    owned_by_a += lease.owner == "a";
    EXPECT_GT(lease.expires_in_ms, 0);
  }
  EXPECT_EQ(owned_by_a, 40);
  // Renewal returns what is still held at the held epochs, and nothing at a stale epoch.
  auto renewed = a->Renew("a", got_a.value(), milliseconds(60000));
  ASSERT_TRUE(renewed);
  EXPECT_EQ(renewed.value().size(), 40u);
  auto stale = a->Renew("a", {{got_a.value().front().shard, 7}}, milliseconds(60000));
  ASSERT_TRUE(stale);
  EXPECT_TRUE(stale.value().empty());
}

TEST_F(ShardFenceTest, AnExpiredLeaseIsTakenOverAtAHigherEpochAndTheOldHolderLosesIt) {
  ShardFence fence("a");
  auto journal = Member(fence);
  auto a = Leases();
  auto b = Leases();
  ASSERT_TRUE(journal && a && b);
  auto got_a = a->Acquire("a", "127.0.0.1:1", {}, 64, milliseconds(300));
  ASSERT_TRUE(got_a);
  ASSERT_EQ(got_a.value().size(), 64u);
  std::this_thread::sleep_for(milliseconds(400));
  auto got_b = b->Acquire("b", "127.0.0.1:2", {}, 64, milliseconds(60000));
  ASSERT_TRUE(got_b);
  ASSERT_EQ(got_b.value().size(), 64u);
  for (const HeldShard& h : got_b.value()) EXPECT_EQ(h.epoch, 2);
  auto renewed = a->Renew("a", got_a.value(), milliseconds(60000));
  ASSERT_TRUE(renewed);
  EXPECT_TRUE(renewed.value().empty()) << "a deposed holder renews nothing";
  // Released shards are free at once.
  ASSERT_TRUE(b->Release("b", {got_b.value().front()}));
  auto again = a->Acquire("a", "127.0.0.1:1", {}, 64, milliseconds(60000));
  ASSERT_TRUE(again);
  ASSERT_EQ(again.value().size(), 1u);
  EXPECT_EQ(again.value().front().shard, got_b.value().front().shard);
  EXPECT_EQ(again.value().front().epoch, 3);
}

TEST_F(ShardFenceTest, AppendsLandOnlyWhileTheLeaseIsHeldAtTheFencedEpoch) {
  ShardFence fence_a("a");
  auto journal_a = Member(fence_a);
  auto a = Leases();
  auto b = Leases();
  ASSERT_TRUE(journal_a && a && b);
  const std::string id = "refund-0";
  const int shard = ShardOf(id);
  // Not held: refused, nothing written, the journal still usable.
  auto refused = journal_a->Append(MarkerStep(id, 1));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::kFenced) << refused.error().ToString();
  EXPECT_NE(refused.error().message().find("cluster: write refused, shard " +
                                           std::to_string(shard)),
            std::string::npos)
      << refused.error().message();
  EXPECT_EQ(Events(id), 0);
  // Held: lands.
  auto got = a->Acquire("a", "127.0.0.1:1", {}, 64, milliseconds(300));
  ASSERT_TRUE(got);
  for (const HeldShard& h : got.value()) fence_a.Hold(h.shard, h.epoch);
  auto landed = journal_a->Append(MarkerStep(id, 1));
  ASSERT_TRUE(landed) << landed.error().ToString();
  EXPECT_EQ(Events(id), 1);
  // B takes the shard over once A's lease expired (A was "paused"); A still believes it holds
  // the shard at its old epoch, and its next append is refused: nothing lands.
  std::this_thread::sleep_for(milliseconds(400));
  auto taken = b->Acquire("b", "127.0.0.1:2", {}, 64, milliseconds(60000));
  ASSERT_TRUE(taken);
  ASSERT_TRUE(fence_a.Holds(shard));
  auto deposed = journal_a->Append(MarkerStep(id, 2));
  ASSERT_FALSE(deposed);
  EXPECT_EQ(deposed.error().code(), Errc::kFenced) << deposed.error().ToString();
  EXPECT_NE(deposed.error().message().find("held by 'b' at epoch 2 while this server held epoch 1"),
            std::string::npos)
      << deposed.error().message();
  EXPECT_EQ(Events(id), 1);
  // In a group, only the fenced request is refused; one to a shard A still holds lands.
  ShardFence fence_b("b");
  for (const HeldShard& h : taken.value()) fence_b.Hold(h.shard, h.epoch);
  auto journal_b = Member(fence_b);
  ASSERT_TRUE(journal_b);
  ASSERT_TRUE(b->Release("b", {{ShardOf("wf-x"), 2}}));
  auto mine = a->Acquire("a", "127.0.0.1:1", {}, 1, milliseconds(60000));
  ASSERT_TRUE(mine);
  ASSERT_EQ(mine.value().size(), 1u);
  fence_a.Hold(mine.value().front().shard, mine.value().front().epoch);
  const AppendRequest one = MarkerStep("wf-x", 1);
  const AppendRequest two = MarkerStep(id, 2);
  const AppendRequest* group[] = {&one, &two};
  auto results = journal_a->AppendGroup(group);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0]) << results[0].error().ToString();
  ASSERT_FALSE(results[1]);
  EXPECT_EQ(results[1].error().code(), Errc::kFenced);
  EXPECT_EQ(Events("wf-x"), 1);
  EXPECT_EQ(Events(id), 1);
  // The new owner writes on.
  auto by_b = journal_b->Append(MarkerStep(id, 2));
  ASSERT_TRUE(by_b) << by_b.error().ToString();
  EXPECT_EQ(Events(id), 2);
}

TEST_F(ShardFenceTest, ATakeoverWaitsForAnAppendThatCheckedTheOldEpoch) {
  ShardFence fence("a");
  auto journal = Member(fence);  // migrates
  auto a = Leases();
  auto b = Leases();
  ASSERT_TRUE(journal && a && b);
  auto got = a->Acquire("a", "127.0.0.1:1", {}, 64, milliseconds(200));
  ASSERT_TRUE(got);
  std::this_thread::sleep_for(milliseconds(300));  // a's leases expired
  // An append of A's in flight: its transaction holds the shard's shared lock, as CheckFence
  // takes it, and has not committed.
  const int shard = ShardOf("refund-0");
  auto in_flight = PgConnection::Connect(conninfo_);
  ASSERT_TRUE(in_flight);
  ASSERT_TRUE(in_flight.value().Exec("BEGIN"));
  ASSERT_TRUE(in_flight.value().Exec(std::string("SELECT pg_advisory_xact_lock_shared(") +
                                     kShardLockClass + ", " + std::to_string(shard) + ")"));
  std::atomic<bool> done{false};
  Result<std::vector<HeldShard>> taken = std::vector<HeldShard>{};
  std::thread takeover([&] {
    taken = b->Acquire("b", "127.0.0.1:2", {}, 64, milliseconds(60000));
    done = true;
  });
  std::this_thread::sleep_for(milliseconds(500));
  EXPECT_FALSE(done) << "the takeover went on while an append held the old epoch's lock";
  ASSERT_TRUE(in_flight.value().Exec("COMMIT"));
  takeover.join();
  ASSERT_TRUE(taken) << taken.error().ToString();
  EXPECT_EQ(taken.value().size(), 64u);
}

TEST_F(ShardFenceTest, AClusterMemberNeedsAFence) {
  PostgresJournalOptions options;
  options.mode = PostgresJournalOptions::Mode::kClusterMember;
  auto journal = OpenPostgresJournal(conninfo_, options);
  ASSERT_FALSE(journal);
  EXPECT_EQ(journal.error().code(), Errc::kInvalidArgument);
}

// Issue 30, item 3: the members of a cluster share the database with each other and with
// nobody else. A member is refused a database a single owner holds, and a single owner one
// that a cluster holds, each naming the holder and what to do; once the holder is gone, the
// other kind opens it.
TEST_F(ShardFenceTest, ClusterMembersAndASingleOwnerNeverShareADatabase) {
  PostgresJournalOptions single;
  single.mode = PostgresJournalOptions::Mode::kOwner;
  auto owner = OpenPostgresJournal(conninfo_, single);
  ASSERT_TRUE(owner) << owner.error().ToString();
  ShardFence fence("a");
  PostgresJournalOptions member;
  member.mode = PostgresJournalOptions::Mode::kClusterMember;
  member.fence = &fence;
  auto refused_member = OpenPostgresJournal(conninfo_, member);
  ASSERT_FALSE(refused_member) << "a cluster member joined a single owner's database";
  EXPECT_EQ(refused_member.error().code(), Errc::kFailedPrecondition);
  EXPECT_NE(refused_member.error().message().find("owned by a single server (not a cluster "
                                                  "member): 'reckon pid="),
            std::string::npos)
      << refused_member.error().message();
  EXPECT_NE(refused_member.error().message().find("start it again with --cluster"),
            std::string::npos)
      << refused_member.error().message();
  owner.value().reset();

  auto a = Member(fence);
  ShardFence other("b");
  auto b = Member(other);  // members share it
  ASSERT_TRUE(a && b);
  auto refused_owner = OpenPostgresJournal(conninfo_, single);
  ASSERT_FALSE(refused_owner) << "a single owner took a cluster's database";
  EXPECT_EQ(refused_owner.error().code(), Errc::kFailedPrecondition);
  EXPECT_NE(refused_owner.error().message().find("is held by a cluster (2 member session(s)"),
            std::string::npos)
      << refused_owner.error().message();
  EXPECT_NE(refused_owner.error().message().find("--cluster"), std::string::npos);
  a.reset();
  b.reset();
  auto after = OpenPostgresJournal(conninfo_, single);
  EXPECT_TRUE(after) << after.error().ToString();
}

}  // namespace
}  // namespace reckon::storage
