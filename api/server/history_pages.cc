#include "reckon/api/server/history_pages.h"

#include <cstring>

#include "reckon/storage/event_codec.h"

namespace reckon::api {
namespace {

constexpr char kMagic[4] = {'r', 'k', 'p', '1'};
constexpr std::size_t kTokenBytes = sizeof kMagic + 2 * sizeof(std::uint64_t);

std::size_t Words(std::size_t bytes) { return (bytes + 7) / 8 * 8; }

void PutU64(char* out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((value >> (8 * i)) & 0xff);
}

std::uint64_t GetU64(const std::byte* in) {
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= std::uint64_t(std::to_integer<unsigned>(in[i])) << (8 * i);
  return value;
}

}  // namespace

namespace {

// A HistoryEvent is 2 data words and 2 pointers; its type text has a NUL; its payload is
// padded to a word.
std::size_t WireBytes(const storage::Event& event, std::size_t payload_bytes) {
  constexpr std::size_t kStruct = 4 * 8;
  const std::size_t type = storage::EventTypeName(event.body).size() + 1;
  return kStruct + Words(type) + Words(payload_bytes);
}

}  // namespace

std::size_t EventWireBytes(const storage::Event& event) {
  return WireBytes(event, storage::EncodeEventBody(event.body).size());
}

Page CutPage(std::span<const storage::Event> events, std::size_t from, std::size_t budget) {
  Page page{from, {}};
  std::size_t bytes = 0;
  while (page.end < events.size()) {
    std::string payload = storage::EncodeEventBody(events[page.end].body);
    const std::size_t next = WireBytes(events[page.end], payload.size());
    if (page.end > from && bytes + next > budget) break;
    bytes += next;
    page.payloads.push_back(std::move(payload));
    ++page.end;
  }
  return page;
}

std::size_t PageEnd(std::span<const storage::Event> events, std::size_t from, std::size_t budget) {
  return CutPage(events, from, budget).end;
}

std::string PageToken(std::uint64_t task_token, std::size_t next) {
  std::string token(kTokenBytes, '\0');
  std::memcpy(token.data(), kMagic, sizeof kMagic);
  PutU64(token.data() + sizeof kMagic, task_token);
  PutU64(token.data() + sizeof kMagic + 8, next);
  return token;
}

Result<std::size_t> PageTokenPosition(std::span<const std::byte> token, std::uint64_t task_token) {
  if (token.size() != kTokenBytes || std::memcmp(token.data(), kMagic, sizeof kMagic) != 0) {
    return Err(Errc::kInvalidArgument,
               "pageToken is not a page token this server issues; pass the task's or the last "
               "page's nextPageToken as received");
  }
  if (GetU64(token.data() + sizeof kMagic) != task_token) {
    return Err(Errc::kInvalidArgument, "pageToken belongs to another workflow task than " +
                                           std::to_string(task_token) +
                                           "; pass the nextPageToken this task's pages gave");
  }
  return static_cast<std::size_t>(GetU64(token.data() + sizeof kMagic + 8));
}

}  // namespace reckon::api
