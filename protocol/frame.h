// Frames: Cap'n Proto messages in the standard stream framing, read from and written to a byte
// stream, with limits checked before anything is allocated or trusted.
//
// The framing (capnp/serialize.h, "messageToFlatArray"): a little-endian uint32 holding the
// segment count minus one, one uint32 per segment holding its size in 8-byte words, zero
// padding to an 8-byte boundary, then the segments. A frame is read in two steps: the segment
// table first (its size and the message size are checked against FrameLimits), then the body
// into word-aligned memory that Cap'n Proto can read in place.
//
// Contract: a frame that breaks a limit or is not well formed yields Errc::kInvalidArgument
// naming the limit or the defect; the stream is then out of step and must be closed.
#pragma once

#include <capnp/message.h>
#include <kj/array.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "reckon/base/error.h"

namespace reckon::api {

struct FrameLimits {
  std::size_t max_message_bytes = 8u << 20;  // whole frame, segment table included
  std::uint32_t max_segments = 64;
  // Cap'n Proto reader limits: words a reader may visit (guards against amplification by
  // shared pointers) and how deeply structs may nest.
  std::uint64_t traversal_limit_words = 4u << 20;
  int nesting_limit = 32;

  capnp::ReaderOptions ReaderOptions() const;
};

// What the first 8 bytes of a frame say: how many more bytes the segment table needs.
// Errc::kInvalidArgument if the segment count breaks the limits.
Result<std::size_t> SegmentTableRemainder(std::span<const std::byte, 8> first8,
                                          const FrameLimits& limits);

// Given the whole segment table (first 8 bytes plus the remainder), the body size in bytes.
// Errc::kInvalidArgument if the message would exceed max_message_bytes or a segment is empty
// where Cap'n Proto requires a word.
Result<std::size_t> BodyBytes(std::span<const std::byte> table, const FrameLimits& limits);

// A frame held in word-aligned memory (segment table and body), ready to be read in place.
class Frame {
 public:
  Frame() = default;
  explicit Frame(kj::Array<capnp::word> words) : words_(kj::mv(words)) {}

  std::span<const std::byte> bytes() const;
  kj::ArrayPtr<const capnp::word> words() const { return words_.asPtr(); }
  bool empty() const { return words_.size() == 0; }

 private:
  kj::Array<capnp::word> words_;
};

// Serializes a built message into one frame.
Frame EncodeFrame(capnp::MessageBuilder& message);

// Parses a whole frame from `bytes` (any alignment; copied). Used by tests and tools that have
// the bytes in memory; the network path reads with FrameStream (protocol/frame_stream.h).
Result<Frame> ParseFrame(std::span<const std::byte> bytes, const FrameLimits& limits);

}  // namespace reckon::api
