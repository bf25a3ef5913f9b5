// ConnectionDeadlines with times chosen by the test: the handshake, idle and unread-replies
// limits each close at their deadline and not before, what resets each clock, and when the
// watchdog is told to look again.
#include <gtest/gtest.h>

#include "reckon/api/server/connection_deadlines.h"
#include "reckon/api/server/server.h"

namespace reckon::api {
namespace {

using namespace std::chrono_literals;
using Clock = ConnectionDeadlines::Clock;

ServerOptions Options() {
  ServerOptions options;
  options.handshake_timeout = 10s;
  options.idle_timeout = 300s;
  options.max_unread_reply_bytes = 4u << 20;
  options.unread_reply_timeout = 30s;
  return options;
}

TEST(ConnectionDeadlinesTest, NoWholeFrameWithinTheHandshakeTimeoutCloses) {
  const ServerOptions options = Options();
  const Clock::time_point t0{};
  ConnectionDeadlines deadlines(options, t0);
  auto early = deadlines.Check(t0 + 9s, {});
  EXPECT_FALSE(early.broken);
  EXPECT_EQ(early.check_again, t0 + 10s);
  auto late = deadlines.Check(t0 + 10s, {});
  ASSERT_TRUE(late.broken);
  EXPECT_EQ(late.broken->code(), Errc::kDeadlineExceeded);
  EXPECT_STREQ(late.limit, "handshake-timeout-ms");
  EXPECT_NE(late.broken->message().find("--handshake-timeout-ms"), std::string::npos);
}

TEST(ConnectionDeadlinesTest, IdleCountsFromTheLastFrameOrAnswerAndNotWhileBusy) {
  const ServerOptions options = Options();
  const Clock::time_point t0{};
  ConnectionDeadlines deadlines(options, t0);
  EXPECT_TRUE(deadlines.FrameReceived(t0 + 1s)) << "the first frame: look again";
  EXPECT_EQ(deadlines.Check(t0 + 2s, {}).check_again, t0 + 301s);
  EXPECT_FALSE(deadlines.FrameReceived(t0 + 1s));
  // A request in flight for longer than the idle timeout: not idle.
  auto busy = deadlines.Check(t0 + 400s, {.in_flight = 1});
  EXPECT_FALSE(busy.broken);
  EXPECT_EQ(busy.check_again, t0 + 700s);
  deadlines.RequestsDone(t0 + 500s);
  EXPECT_FALSE(deadlines.Check(t0 + 799s, {}).broken);
  auto idle = deadlines.Check(t0 + 800s, {});
  ASSERT_TRUE(idle.broken);
  EXPECT_STREQ(idle.limit, "idle-timeout-ms");
  EXPECT_NE(idle.broken->message().find("--idle-timeout-ms"), std::string::npos);
}

TEST(ConnectionDeadlinesTest, RepliesLeftUnreadOverTheBoundClose) {
  const ServerOptions options = Options();
  const Clock::time_point t0{};
  ConnectionDeadlines deadlines(options, t0);
  deadlines.FrameReceived(t0);
  const std::size_t over = options.max_unread_reply_bytes + 1;
  // Over the bound from t0+1s; the peer reads nothing.
  auto first = deadlines.Check(t0 + 1s, {.in_flight = 1, .queued_bytes = over, .bytes_sent = 0});
  EXPECT_FALSE(first.broken);
  EXPECT_EQ(first.check_again, t0 + 31s);
  // It reads a trickle (less than a quarter of the bound): the clock keeps running.
  EXPECT_FALSE(deadlines.Check(t0 + 20s, {1, over, 100'000}).broken);
  auto closed = deadlines.Check(t0 + 31s, {1, over, 200'000});
  ASSERT_TRUE(closed.broken);
  EXPECT_EQ(closed.broken->code(), Errc::kResourceExhausted);
  EXPECT_STREQ(closed.limit, "unread-reply-timeout-ms");
  EXPECT_NE(closed.broken->message().find("--max-unread-reply-kib"), std::string::npos);
}

TEST(ConnectionDeadlinesTest, APeerThatReadsOrDrainsBelowTheBoundRestartsTheClock) {
  const ServerOptions options = Options();
  const Clock::time_point t0{};
  ConnectionDeadlines deadlines(options, t0);
  deadlines.FrameReceived(t0);
  const std::size_t over = options.max_unread_reply_bytes + 1;
  EXPECT_FALSE(deadlines.Check(t0, {1, over, 0}).broken);
  const std::size_t progress = ConnectionDeadlines::ReadProgressBytes(options);
  EXPECT_EQ(progress, 1u << 20) << "a quarter of the 4 MiB bound";
  // 1 MiB read by 29 s: a slow reader, not a silent one.
  auto reading = deadlines.Check(t0 + 29s, {1, over, progress});
  EXPECT_FALSE(reading.broken);
  EXPECT_EQ(reading.check_again, t0 + 59s);
  EXPECT_FALSE(deadlines.Check(t0 + 58s, {1, over, progress + 1000}).broken);
  // Drained below the bound, then over again: a new clock.
  EXPECT_FALSE(deadlines.Check(t0 + 58s, {1, 10, progress + 1000}).broken);
  EXPECT_FALSE(deadlines.Check(t0 + 60s, {1, over, progress + 1000}).broken);
  EXPECT_FALSE(deadlines.Check(t0 + 89s, {1, over, progress + 1000}).broken);
  EXPECT_TRUE(deadlines.Check(t0 + 90s, {1, over, progress + 1000}).broken);
}

}  // namespace
}  // namespace reckon::api
