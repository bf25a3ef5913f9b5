// Encoding of event bodies as Cap'n Proto messages (storage/events.capnp), the bytes stored in
// the journal's `payload` column.
//
// EncodeEventBody writes a single-segment message in the standard flat-array form.
// DecodeEventBody accepts bytes at any alignment: Cap'n Proto rejects unaligned buffers, so the
// bytes are first copied into word-aligned scratch memory (reused across calls through an
// EventDecoder). Malformed bytes yield Errc::kCorruption naming what failed; a decoder is
// never left in a bad state. An EventDecoder is not thread-safe; use one per thread.
//
// Sealed payloads (storage/payload_codec.h): EncodeStoredEvent is what a journal stores. With
// a codec, an event's payload fields (storage/payload_fields.h) are encrypted into a
// SealedEvent bound to the event's place; the rest stays readable. The wire (history sent to
// workers) always carries clear events (EncodeEventBody).
#pragma once

#include <capnp/common.h>
#include <kj/array.h>

#include <cstddef>
#include <span>
#include <string>

#include "reckon/base/error.h"
#include "reckon/storage/event.h"
#include "reckon/storage/payload_codec.h"
#include "reckon/storage/payload_fields.h"

namespace reckon::storage {

// The event in the clear: what the wire carries, and a journal without a codec stores.
std::string EncodeEventBody(const EventBody& body);

// What a journal stores for `body` at `place`: with a codec (not owned; may be null) and a
// payload that is not empty, a SealedEvent under the codec's sealing key; else the same bytes
// as EncodeEventBody. Errors: the codec's (kInternal).
Result<std::string> EncodeStoredEvent(const EventBody& body, const EventPlace& place,
                                      const PayloadCodec* codec);

class EventDecoder {
 public:
  // `codec` (not owned, may be null) opens sealed payloads; it must outlive the decoder.
  explicit EventDecoder(const PayloadCodec* codec = nullptr) : codec_(codec) {}

  // An event from the wire. A sealed event is refused (kFailedPrecondition): it is opened
  // only where it is stored, with its place.
  Result<EventBody> Decode(std::span<const std::byte> bytes);
  // An event stored at `place` in a journal: a sealed payload is opened with the codec.
  // Errors besides malformed bytes: kFailedPrecondition naming the key id when there is no
  // codec or it lacks that key; kCorruption when the box does not authenticate (altered, or
  // moved from another place). Never an event with made-up payloads.
  Result<EventBody> Decode(std::span<const std::byte> bytes, const EventPlace& place);

 private:
  Result<EventBody> DecodeAt(std::span<const std::byte> bytes, const EventPlace* place);

  const PayloadCodec* codec_ = nullptr;
  // Grows to the largest event decoded so far. Not a std::vector: capnp::word cannot be
  // copied or moved, as std::vector::resize requires (clang enforces it; gcc 12 does not).
  kj::Array<capnp::word> scratch_;
};

}  // namespace reckon::storage
