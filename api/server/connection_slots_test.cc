// ConnectionSlots with addresses and times chosen by the test: a newcomer over either limit
// takes, in the limit's scope, a slot of the address that holds the most, its oldest opening
// connection, else its longest idle; busy ones are never taken; a refusal changes nothing;
// counts follow releases.
#include <gtest/gtest.h>

#include "reckon/api/server/connection_slots.h"

namespace reckon::api {
namespace {

using namespace std::chrono_literals;
using Clock = ConnectionSlots::Clock;
using Phase = ConnectionSlots::Phase;
using Limit = ConnectionSlots::Limit;

const boost::asio::ip::address kA = boost::asio::ip::make_address("127.0.0.1");
const boost::asio::ip::address kB = boost::asio::ip::make_address("127.0.0.2");
const Clock::time_point t0{};

TEST(ConnectionSlotsTest, UnderBothLimitsEveryoneIsAdmittedAndCounted) {
  ConnectionSlots slots({.max_connections = 4, .max_per_peer = 2});
  EXPECT_TRUE(slots.Admit(1, kA, t0).admitted);
  EXPECT_TRUE(slots.Admit(2, kA, t0).admitted);
  EXPECT_TRUE(slots.Admit(3, kB, t0).admitted);
  EXPECT_EQ(slots.size(), 3u);
  EXPECT_EQ(slots.held_by(kA), 2u);
  EXPECT_EQ(slots.held_by(kB), 1u);
  slots.Release(1);
  slots.Release(1);  // twice: nothing
  EXPECT_EQ(slots.held_by(kA), 1u);
  EXPECT_FALSE(slots.holds(1));
  EXPECT_EQ(slots.size(), 2u);
}

TEST(ConnectionSlotsTest, WhenFullTheOldestOpeningGoesFirstThenTheLongestIdle) {
  ConnectionSlots slots({.max_connections = 3, .max_per_peer = 3});
  ASSERT_TRUE(slots.Admit(1, kA, t0).admitted);
  ASSERT_TRUE(slots.Admit(2, kA, t0 + 1s).admitted);
  ASSERT_TRUE(slots.Admit(3, kB, t0 + 2s).admitted);
  slots.Enter(1, Phase::kIdle, t0 + 3s);  // 1 sent a request and was answered: idle
  // 2 is the oldest still opening: it goes, though 1 is older.
  auto first = slots.Admit(4, kB, t0 + 4s);
  ASSERT_TRUE(first.admitted);
  ASSERT_EQ(first.evicted.size(), 1u);
  EXPECT_EQ(first.evicted[0].id, 2u);
  EXPECT_EQ(first.evicted[0].phase, Phase::kOpening);
  EXPECT_EQ(first.evicted[0].limit, Limit::kTotal);
  EXPECT_FALSE(slots.holds(2));
  // Then 3 (opening since 2 s) before 4 (opening since 4 s).
  auto second = slots.Admit(5, kB, t0 + 5s);
  ASSERT_EQ(second.evicted.size(), 1u);
  EXPECT_EQ(second.evicted[0].id, 3u);
  // With 4 and 5 busy, the idle one goes.
  slots.Enter(4, Phase::kBusy, t0 + 6s);
  slots.Enter(5, Phase::kBusy, t0 + 6s);
  auto third = slots.Admit(6, kA, t0 + 7s);
  ASSERT_EQ(third.evicted.size(), 1u);
  EXPECT_EQ(third.evicted[0].id, 1u);
  EXPECT_EQ(third.evicted[0].phase, Phase::kIdle);
  EXPECT_EQ(slots.size(), 3u);
}

TEST(ConnectionSlotsTest, TheAddressHoldingTheMostSlotsGivesFirst) {
  const auto kC = boost::asio::ip::make_address("127.0.0.3");
  ConnectionSlots slots({.max_connections = 4, .max_per_peer = 4});
  ASSERT_TRUE(slots.Admit(1, kB, t0).admitted);  // the oldest, opening, alone on its address
  ASSERT_TRUE(slots.Admit(2, kA, t0 + 1s).admitted);
  ASSERT_TRUE(slots.Admit(3, kA, t0 + 2s).admitted);
  ASSERT_TRUE(slots.Admit(4, kA, t0 + 3s).admitted);
  slots.Enter(2, Phase::kIdle, t0 + 4s);
  // A floods: each newcomer takes one of A's, B keeps its one.
  for (ConnectionSlots::Id id = 5; id < 9; ++id) {
    auto admission = slots.Admit(id, id % 2 ? kA : kC, t0 + 5s);
    ASSERT_EQ(admission.evicted.size(), 1u);
    EXPECT_NE(admission.evicted[0].id, 1u) << "newcomer " << id;
  }
  EXPECT_TRUE(slots.holds(1));
}

TEST(ConnectionSlotsTest, AmongIdleOnesTheLongestIdleGoes) {
  ConnectionSlots slots({.max_connections = 2, .max_per_peer = 2});
  ASSERT_TRUE(slots.Admit(1, kA, t0).admitted);
  ASSERT_TRUE(slots.Admit(2, kA, t0 + 1s).admitted);
  slots.Enter(2, Phase::kIdle, t0 + 2s);
  slots.Enter(1, Phase::kIdle, t0 + 3s);  // 1 answered later: idle for less time
  auto admission = slots.Admit(3, kB, t0 + 4s);
  ASSERT_EQ(admission.evicted.size(), 1u);
  EXPECT_EQ(admission.evicted[0].id, 2u);
}

TEST(ConnectionSlotsTest, WhenEveryoneIsBusyTheNewcomerIsRefusedAndNothingChanges) {
  ConnectionSlots slots({.max_connections = 2, .max_per_peer = 2});
  ASSERT_TRUE(slots.Admit(1, kA, t0).admitted);
  ASSERT_TRUE(slots.Admit(2, kB, t0).admitted);
  slots.Enter(1, Phase::kBusy, t0 + 1s);
  slots.Enter(2, Phase::kBusy, t0 + 1s);
  auto refused = slots.Admit(3, kB, t0 + 2s);
  EXPECT_FALSE(refused.admitted);
  EXPECT_EQ(refused.refused_by, Limit::kTotal);
  EXPECT_TRUE(refused.evicted.empty());
  EXPECT_FALSE(slots.holds(3));
  EXPECT_EQ(slots.size(), 2u);
}

TEST(ConnectionSlotsTest, APeerAtItsLimitLosesItsOwnIdleSlotsNotAnyoneElses) {
  ConnectionSlots slots({.max_connections = 10, .max_per_peer = 2});
  ASSERT_TRUE(slots.Admit(1, kB, t0).admitted);  // another peer's, older and opening
  ASSERT_TRUE(slots.Admit(2, kA, t0 + 1s).admitted);
  ASSERT_TRUE(slots.Admit(3, kA, t0 + 2s).admitted);
  auto admission = slots.Admit(4, kA, t0 + 3s);
  ASSERT_TRUE(admission.admitted);
  ASSERT_EQ(admission.evicted.size(), 1u);
  EXPECT_EQ(admission.evicted[0].id, 2u);
  EXPECT_EQ(admission.evicted[0].limit, Limit::kPerPeer);
  EXPECT_TRUE(slots.holds(1));
  EXPECT_EQ(slots.held_by(kA), 2u);
  // With its two busy, the peer is refused, while another peer is still admitted.
  slots.Enter(3, Phase::kBusy, t0 + 4s);
  slots.Enter(4, Phase::kBusy, t0 + 4s);
  auto refused = slots.Admit(5, kA, t0 + 5s);
  EXPECT_FALSE(refused.admitted);
  EXPECT_EQ(refused.refused_by, Limit::kPerPeer);
  EXPECT_TRUE(slots.Admit(6, kB, t0 + 5s).admitted);
}

TEST(ConnectionSlotsTest, AnIpv4MappedAddressIsItsIpv4Peer) {
  ConnectionSlots slots({.max_connections = 10, .max_per_peer = 1});
  ASSERT_TRUE(slots.Admit(1, kA, t0).admitted);
  slots.Enter(1, Phase::kBusy, t0);
  auto mapped = slots.Admit(2, boost::asio::ip::make_address("::ffff:127.0.0.1"), t0);
  EXPECT_FALSE(mapped.admitted);
  EXPECT_EQ(mapped.refused_by, Limit::kPerPeer);
}

TEST(ConnectionSlotsTest, EnterAndReleaseOfAnEvictedIdChangeNothing) {
  ConnectionSlots slots({.max_connections = 1, .max_per_peer = 1});
  ASSERT_TRUE(slots.Admit(1, kA, t0).admitted);
  auto admission = slots.Admit(2, kB, t0 + 1s);
  ASSERT_EQ(admission.evicted.size(), 1u);
  slots.Enter(1, Phase::kBusy, t0 + 2s);  // the evicted connection's coroutine, still unwinding
  slots.Release(1);
  EXPECT_TRUE(slots.holds(2));
  EXPECT_EQ(slots.size(), 1u);
  EXPECT_EQ(slots.held_by(kA), 0u);
}

}  // namespace
}  // namespace reckon::api
