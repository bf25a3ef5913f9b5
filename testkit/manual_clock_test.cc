// ManualClock with the engine's TimerQueue: entries wait for the clock's moves, never for the
// steady clock, and fire in due order once the clock passes them.
#include "reckon/testkit/manual_clock.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <stdexcept>
#include <vector>

#include "reckon/engine/timer_queue.h"

namespace reckon::testkit {
namespace {

using namespace std::chrono_literals;

TEST(ManualClockTest, TimersFireWhenTheClockPassesThemNotBefore) {
  boost::asio::io_context io;
  ManualClock clock(FromMicros(1'000'000));
  TimerQueue timers(io.get_executor(), clock);
  std::vector<int> fired;
  const std::int64_t now = clock.NowMicros();
  timers.Arm(now + std::chrono::microseconds(72h).count(), [&] { fired.push_back(3); });
  timers.Arm(now + std::chrono::microseconds(1h).count(), [&] { fired.push_back(1); });
  timers.Arm(now, [&] { fired.push_back(0); });  // already due

  io.poll();
  EXPECT_EQ(fired, (std::vector<int>{0}));
  ASSERT_EQ(clock.NextDue(), FromMicros(now) + 1h);

  clock.Advance(59min);
  io.restart();
  io.poll();
  EXPECT_EQ(fired, (std::vector<int>{0})) << "one minute early";

  ASSERT_TRUE(clock.AdvanceToNextDue());
  io.restart();
  io.poll();
  EXPECT_EQ(fired, (std::vector<int>{0, 1}));

  clock.Advance(100h);
  io.restart();
  io.poll();
  EXPECT_EQ(fired, (std::vector<int>{0, 1, 3}));
  EXPECT_FALSE(clock.NextDue().has_value());
  EXPECT_FALSE(clock.AdvanceToNextDue());
}

TEST(ManualClockTest, AQueueThatDiesStopsWatching) {
  boost::asio::io_context io;
  ManualClock clock;
  {
    TimerQueue timers(io.get_executor(), clock);
    timers.Arm(clock.NowMicros() + 1'000'000, [] {});
    EXPECT_TRUE(clock.NextDue().has_value());
  }
  EXPECT_FALSE(clock.NextDue().has_value());
  clock.Advance(1s);  // tells nobody
}

TEST(ManualClockTest, TimeNeverGoesBack) {
  ManualClock clock;
  EXPECT_THROW(clock.Advance(-1us), std::invalid_argument);
}

}  // namespace
}  // namespace reckon::testkit
