// History pages (api/server/history_pages.h): pages stay within their byte budget, an event
// larger than the budget travels alone, and a page token names its task and position only.
#include "reckon/api/server/history_pages.h"

#include <gtest/gtest.h>

#include <vector>

namespace reckon::api {
namespace {

storage::Event Signal(std::int64_t seq, std::size_t payload_bytes) {
  storage::Event event;
  event.seq = seq;
  event.body = storage::SignalReceived{"s", "\"" + std::string(payload_bytes, 'p') + "\"", "op"};
  return event;
}

TEST(HistoryPagesTest, PagesStayWithinTheBudgetAndABigEventTravelsAlone) {
  std::vector<storage::Event> events;
  for (int i = 1; i <= 10; ++i) events.push_back(Signal(i, i == 5 ? 1000 : 10));
  const std::size_t small = EventWireBytes(events[0]);
  ASSERT_GT(EventWireBytes(events[4]), 1000u);
  const std::size_t budget = 3 * small;
  std::vector<std::size_t> ends;
  for (std::size_t from = 0; from < events.size(); from = ends.back()) {
    ends.push_back(PageEnd(events, from, budget));
  }
  // Three small ones, one (the fourth) before the big one, the big one alone, then 3 + 2.
  EXPECT_EQ(ends, (std::vector<std::size_t>{3, 4, 5, 8, 10}));
  EXPECT_EQ(PageEnd(events, 4, 1), 5u);  // a budget below every event: one event per page
  EXPECT_EQ(PageEnd(events, 0, 1u << 20), 10u);
}

TEST(HistoryPagesTest, ATokenNamesItsTaskAndPosition) {
  const std::string token = PageToken(42, 7);
  auto bytes = std::span<const std::byte>(reinterpret_cast<const std::byte*>(token.data()),
                                          token.size());
  auto position = PageTokenPosition(bytes, 42);
  ASSERT_TRUE(position) << position.error().ToString();
  EXPECT_EQ(position.value(), 7u);
  auto foreign = PageTokenPosition(bytes, 43);
  ASSERT_FALSE(foreign);
  EXPECT_EQ(foreign.error().code(), Errc::kInvalidArgument);
  EXPECT_NE(foreign.error().message().find("another workflow task"), std::string::npos);
  auto cut = PageTokenPosition(bytes.first(5), 42);
  ASSERT_FALSE(cut);
  EXPECT_EQ(cut.error().code(), Errc::kInvalidArgument);
  auto empty = PageTokenPosition({}, 42);
  EXPECT_FALSE(empty);
}

}  // namespace
}  // namespace reckon::api
