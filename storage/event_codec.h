// Encoding of event bodies as Cap'n Proto messages (storage/events.capnp), the bytes stored in
// the journal's `payload` column.
//
// EncodeEventBody writes a single-segment message in the standard flat-array form.
// DecodeEventBody accepts bytes at any alignment: Cap'n Proto rejects unaligned buffers, so the
// bytes are first copied into word-aligned scratch memory (reused across calls through an
// EventDecoder). Malformed bytes yield Errc::kCorruption naming what failed; a decoder is
// never left in a bad state. An EventDecoder is not thread-safe; use one per thread.
#pragma once

#include <capnp/common.h>

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/storage/event.h"

namespace reckon::storage {

std::string EncodeEventBody(const EventBody& body);

class EventDecoder {
 public:
  Result<EventBody> Decode(std::span<const std::byte> bytes);

 private:
  std::vector<capnp::word> scratch_;
};

}  // namespace reckon::storage
