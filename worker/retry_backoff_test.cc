#include "reckon/worker/retry_backoff.h"

#include <gtest/gtest.h>

namespace reckon {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

TEST(RetryBackoffTest, WaitsDoubleWithJitterUpToTheCapAndStartOverAfterAReset) {
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    RetryBackoff backoff(100ms, 30s, seed);
    milliseconds full = 100ms;
    for (int i = 0; i < 20; ++i) {
      const milliseconds wait = backoff.Next();
      EXPECT_GE(wait, full / 2) << "seed " << seed << " failure " << i;
      EXPECT_LE(wait, full) << "seed " << seed << " failure " << i;
      full = std::min<milliseconds>(full * 2, 30s);
    }
    EXPECT_EQ(backoff.failures(), 20);
    backoff.Reset();
    EXPECT_LE(backoff.Next(), 100ms);
  }
}

TEST(RetryBackoffTest, ASeedReplaysItsWaits) {
  RetryBackoff a(100ms, 30s, 7), b(100ms, 30s, 7);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(a.Next(), b.Next());
}

}  // namespace
}  // namespace reckon
