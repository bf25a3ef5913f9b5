// History pages (docs/PROTOCOL.md, "History pages"; docs/ARCHITECTURE.md, decision 48): how the
// server cuts the events of a workflow task into pages bounded by bytes, and the page token
// that says where the next page starts.
//
// A page holds events in order while their encoded size stays within the budget, and always at
// least one: an event larger than the budget travels alone in its page (it must still fit a
// frame; the caller checks the reply it built). A page token is opaque to workers: the task
// token it belongs to and the index of the page's first event in the task's events, so a token
// can never be used for another task. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/storage/event.h"

namespace reckon::api {

// What `event` adds to a reply as a HistoryEvent list element (an upper bound, in bytes).
std::size_t EventWireBytes(const storage::Event& event);

// A page cut from a task's events: where it ends (exclusive), and the encoded payload of each
// of its events, in order, which sizing needed anyway and the reply reuses (EventsToWire).
struct Page {
  std::size_t end = 0;
  std::vector<std::string> payloads;
};
// The page of `events` that starts at `from` (< events.size()): as many events as fit in
// `budget` bytes, and at least one.
Page CutPage(std::span<const storage::Event> events, std::size_t from, std::size_t budget);
// CutPage(...).end.
std::size_t PageEnd(std::span<const storage::Event> events, std::size_t from, std::size_t budget);

// The token of the page of task `task_token` that starts at its event `next`.
std::string PageToken(std::uint64_t task_token, std::size_t next);

// The index a page token names. Errc::kInvalidArgument when `token` is not one this server
// issues, or was issued for another task than `task_token`.
Result<std::size_t> PageTokenPosition(std::span<const std::byte> token, std::uint64_t task_token);

}  // namespace reckon::api
