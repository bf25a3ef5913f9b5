#include "reckon/api/server/audit_limiter.h"

#include <gtest/gtest.h>

namespace reckon::api {
namespace {

using namespace std::chrono_literals;
using Clock = AuditLimiter::Clock;

TEST(AuditLimiterTest, AFloodOfOneLineFromOnePeerIsHeldBackAndCounted) {
  AuditLimiter limiter(AuditLimits{.burst = 3, .window = 60s, .max_keys = 16});
  const Clock::time_point t0{};
  int written = 0;
  for (int i = 0; i < 100; ++i) {
    if (limiter.Admit("10.0.0.1 registerWorker revoked", t0 + i * 10ms)) ++written;
  }
  EXPECT_EQ(written, 3);
  // Another line of the same peer, and the same line of another peer, are not held back.
  EXPECT_EQ(limiter.Admit("10.0.0.1 pollToolTask revoked", t0 + 1s), 0u);
  EXPECT_EQ(limiter.Admit("10.0.0.2 registerWorker revoked", t0 + 1s), 0u);
  // The first line after the window says how many were held back, and a new window starts.
  EXPECT_EQ(limiter.Admit("10.0.0.1 registerWorker revoked", t0 + 61s), 97u);
  EXPECT_EQ(limiter.Admit("10.0.0.1 registerWorker revoked", t0 + 62s), 0u);
  EXPECT_EQ(AuditLimiter::Suppressed(97, "10.0.0.1:5555"),
            " (97 more like this from 10.0.0.1 suppressed)");
  EXPECT_EQ(AuditLimiter::Suppressed(0, "10.0.0.1:5555"), "");
}

TEST(AuditLimiterTest, KeysAreBounded) {
  AuditLimiter limiter(AuditLimits{.burst = 1, .window = 60s, .max_keys = 4});
  const Clock::time_point t0{};
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(limiter.Admit("peer-" + std::to_string(i), t0 + i * 1ms), 0u);
  }
  // peer-0 was dropped long ago (oldest first): it starts afresh.
  EXPECT_EQ(limiter.Admit("peer-0", t0 + 20ms), 0u);
  EXPECT_EQ(limiter.Admit("peer-9", t0 + 20ms), std::nullopt);
}

TEST(AuditLimiterTest, HostOfDropsThePort) {
  EXPECT_EQ(AuditLimiter::HostOf("127.0.0.1:40112"), "127.0.0.1");
  EXPECT_EQ(AuditLimiter::HostOf("[::1]:40112"), "[::1]");
  EXPECT_EQ(AuditLimiter::HostOf("unknown peer"), "unknown peer");
}

}  // namespace
}  // namespace reckon::api
