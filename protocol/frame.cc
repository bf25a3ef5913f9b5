#include "reckon/protocol/frame.h"

#include <capnp/serialize.h>

#include <cstring>
#include <string>

namespace reckon::api {
namespace {

std::uint32_t LoadLe32(const std::byte* p) {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

std::size_t TableBytes(std::uint64_t segments) {
  const std::uint64_t raw = 4 * (1 + segments);
  return static_cast<std::size_t>((raw + 7) / 8 * 8);
}

}  // namespace

capnp::ReaderOptions FrameLimits::ReaderOptions() const {
  capnp::ReaderOptions options;
  options.traversalLimitInWords = traversal_limit_words;
  options.nestingLimit = nesting_limit;
  return options;
}

Result<std::size_t> SegmentTableRemainder(std::span<const std::byte, 8> first8,
                                          const FrameLimits& limits) {
  const std::uint64_t segments = std::uint64_t{LoadLe32(first8.data())} + 1;
  if (segments > limits.max_segments) {
    return Err(Errc::kInvalidArgument,
               "frame declares " + std::to_string(segments) + " segments; the limit is " +
                   std::to_string(limits.max_segments));
  }
  return TableBytes(segments) - 8;
}

Result<std::size_t> BodyBytes(std::span<const std::byte> table, const FrameLimits& limits) {
  if (table.size() < 8) return Err(Errc::kInvalidArgument, "frame shorter than its header");
  const std::uint64_t segments = std::uint64_t{LoadLe32(table.data())} + 1;
  if (table.size() != TableBytes(segments)) {
    return Err(Errc::kInvalidArgument, "segment table size does not match its segment count");
  }
  std::uint64_t words = 0;
  for (std::uint64_t i = 0; i < segments; ++i) {
    const std::uint32_t size = LoadLe32(table.data() + 4 + 4 * i);
    if (i == 0 && size == 0) {
      return Err(Errc::kInvalidArgument, "frame's first segment is empty (no root pointer)");
    }
    words += size;
  }
  const std::uint64_t total = table.size() + words * 8;
  if (total > limits.max_message_bytes) {
    return Err(Errc::kInvalidArgument,
               "frame of " + std::to_string(total) + " bytes exceeds the limit of " +
                   std::to_string(limits.max_message_bytes) + " bytes");
  }
  return static_cast<std::size_t>(words * 8);
}

std::span<const std::byte> Frame::bytes() const {
  auto b = words_.asBytes();
  return {reinterpret_cast<const std::byte*>(b.begin()), b.size()};
}

Frame EncodeFrame(capnp::MessageBuilder& message) {
  return Frame(capnp::messageToFlatArray(message));
}

Result<Frame> ParseFrame(std::span<const std::byte> bytes, const FrameLimits& limits) {
  if (bytes.size() < 8) {
    return Err(Errc::kInvalidArgument, "truncated frame: " + std::to_string(bytes.size()) +
                                           " bytes, the header alone needs 8");
  }
  RECKON_TRY(std::size_t rest, SegmentTableRemainder(bytes.first<8>(), limits));
  if (bytes.size() < 8 + rest) {
    return Err(Errc::kInvalidArgument, "truncated frame: segment table cut short");
  }
  RECKON_TRY(std::size_t body, BodyBytes(bytes.first(8 + rest), limits));
  const std::size_t total = 8 + rest + body;
  if (bytes.size() != total) {
    return Err(Errc::kInvalidArgument,
               "frame is " + std::to_string(bytes.size()) + " bytes; its segment table says " +
                   std::to_string(total));
  }
  auto words = kj::heapArray<capnp::word>(total / 8);
  std::memcpy(words.begin(), bytes.data(), total);
  return Frame(kj::mv(words));
}

}  // namespace reckon::api
