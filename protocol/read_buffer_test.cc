// ReadBuffer and MemoryBudget: memory committed only as bytes arrive, never more than
// max(64 KiB, 2 x bytes held), every byte of it charged, growth the budget refuses failing
// cleanly, and a large buffer given back once its frame is consumed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "reckon/protocol/memory_budget.h"
#include "reckon/protocol/read_buffer.h"

namespace reckon::api {
namespace {

constexpr std::size_t kFrame = 8u << 20;  // what a hostile header announces

// Receives `n` bytes of value `fill` into `buffer`, for a frame of `need` bytes, as a socket
// that delivers at most `chunk` bytes per read would.
void Receive(ReadBuffer& buffer, std::size_t n, std::size_t need, std::byte fill,
             std::size_t chunk = 1u << 20) {
  while (n > 0) {
    auto room = buffer.Room(need);
    ASSERT_TRUE(room) << room.error().ToString();
    ASSERT_FALSE(room.value().empty());
    const std::size_t got = std::min({n, room.value().size(), chunk});
    std::memset(room.value().data(), static_cast<int>(fill), got);
    buffer.Received(got);
    n -= got;
  }
}

TEST(MemoryBudgetTest, TryChargeRefusesWhatDoesNotFitAndChargeAlwaysCounts) {
  MemoryBudget budget(100);
  EXPECT_TRUE(budget.TryCharge(60));
  EXPECT_FALSE(budget.TryCharge(41));
  EXPECT_EQ(budget.used(), 60u);
  EXPECT_TRUE(budget.TryCharge(40));
  EXPECT_TRUE(budget.exhausted());
  budget.Charge(10);  // memory that exists already: counted even over the limit
  EXPECT_EQ(budget.used(), 110u);
  EXPECT_FALSE(budget.TryCharge(1));
  budget.Release(110);
  EXPECT_EQ(budget.used(), 0u);
  {
    MemoryCharge charge(&budget, 30);
    MemoryCharge moved = std::move(charge);
    EXPECT_EQ(budget.used(), 30u);
  }
  EXPECT_EQ(budget.used(), 0u) << "a MemoryCharge gives its bytes back when destroyed";
}

TEST(ReadBufferTest, AnAnnouncedFrameIsNotAllocatedBeforeItsBytesArrive) {
  MemoryBudget budget(64u << 20);
  ReadBuffer buffer(&budget);
  Receive(buffer, 16, kFrame, std::byte{1});
  EXPECT_EQ(buffer.capacity(), ReadBuffer::kFirstBytes);
  EXPECT_EQ(budget.used(), buffer.capacity());
  // As bytes arrive, capacity stays within max(64 KiB, 2 x held), up to the frame.
  for (std::size_t held = 16; held < kFrame;) {
    const std::size_t step = std::min<std::size_t>(kFrame - held, 100'000);
    Receive(buffer, step, kFrame, std::byte{2}, 7'000);
    held += step;
    ASSERT_EQ(buffer.size(), held);
    ASSERT_LE(buffer.capacity(), std::max(ReadBuffer::kKeepBytes, 2 * held)) << held;
    ASSERT_LE(buffer.capacity(), kFrame);
    ASSERT_EQ(budget.used(), buffer.capacity());
  }
  EXPECT_EQ(buffer.capacity(), kFrame);
}

TEST(ReadBufferTest, ABigFrameIsGivenBackOnceConsumed) {
  MemoryBudget budget(64u << 20);
  ReadBuffer buffer(&budget);
  Receive(buffer, 3u << 20, 3u << 20, std::byte{7});
  EXPECT_GE(buffer.capacity(), 3u << 20);
  buffer.Consume(3u << 20);
  EXPECT_EQ(buffer.capacity(), 0u) << "an empty buffer over 64 KiB is freed";
  EXPECT_EQ(budget.used(), 0u);

  // A frame followed by the start of the next: cut down to keep only what is held.
  Receive(buffer, (2u << 20) + 100, (2u << 20) + 100, std::byte{8});
  buffer.Consume(2u << 20);
  EXPECT_EQ(buffer.size(), 100u);
  EXPECT_EQ(buffer.capacity(), ReadBuffer::kKeepBytes);
  EXPECT_EQ(budget.used(), ReadBuffer::kKeepBytes);
  EXPECT_EQ(buffer.data()[99], std::byte{8});

  // Small frames keep their (small) buffer: no churn.
  buffer.Consume(100);
  EXPECT_EQ(buffer.capacity(), ReadBuffer::kKeepBytes);
  buffer.Release();
  EXPECT_EQ(budget.used(), 0u);
}

TEST(ReadBufferTest, GrowthTheBudgetRefusesFailsAndChangesNothing) {
  MemoryBudget budget(1u << 20);
  ReadBuffer buffer(&budget);
  Receive(buffer, 600 * 1024, kFrame, std::byte{3});
  const std::size_t capacity = buffer.capacity();
  const std::size_t used = budget.used();
  // Fill what is left of the capacity, then ask for more: over the 1 MiB budget.
  Receive(buffer, capacity - buffer.size(), kFrame, std::byte{4});
  auto room = buffer.Room(kFrame);
  ASSERT_FALSE(room);
  EXPECT_EQ(room.error().code(), Errc::kResourceExhausted);
  EXPECT_NE(room.error().message().find("memory budget"), std::string::npos)
      << room.error().message();
  EXPECT_EQ(buffer.capacity(), capacity);
  EXPECT_EQ(budget.used(), used);
  EXPECT_EQ(buffer.data()[0], std::byte{3}) << "what was held is intact";
}

TEST(ReadBufferTest, HeldBytesMoveToTheFrontToMakeRoom) {
  ReadBuffer buffer(nullptr);  // no budget: the client side
  Receive(buffer, ReadBuffer::kFirstBytes, ReadBuffer::kFirstBytes, std::byte{5});
  buffer.Consume(ReadBuffer::kFirstBytes - 10);
  // Ten bytes held at the end: the next frame of 4 KiB needs them at the front, no growth.
  Receive(buffer, ReadBuffer::kFirstBytes - 10, ReadBuffer::kFirstBytes, std::byte{6});
  EXPECT_EQ(buffer.capacity(), ReadBuffer::kFirstBytes);
  EXPECT_EQ(buffer.data()[0], std::byte{5});
  EXPECT_EQ(buffer.data()[10], std::byte{6});
}

}  // namespace
}  // namespace reckon::api
