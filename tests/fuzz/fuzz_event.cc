// Fuzz target: an event body read back from a journal blob (storage/event_codec.h). The blob
// is handed over at an odd address, as a SQLite column may be, so the decoder's copy into
// word-aligned memory is exercised. Besides not crashing: an event that decodes re-encodes to
// bytes that decode again, and encoding is stable from there on.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "reckon/storage/event_codec.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

std::span<const std::byte> Bytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace reckon::storage;
  std::vector<std::byte> shifted(size + 1);
  if (size > 0) std::memcpy(shifted.data() + 1, data, size);
  const std::span<const std::byte> blob(shifted.data() + 1, size);
  EventDecoder decoder;
  const EventPlace place{"wf-1", "run-1", 7};
  (void)decoder.Decode(blob, place);
  auto body = decoder.Decode(blob);
  if (!body) return 0;
  const std::string encoded = EncodeEventBody(body.value());
  auto again = decoder.Decode(Bytes(encoded));
  FUZZ_CHECK(again.has_value(), "a decoded event re-encodes to bytes that do not decode");
  FUZZ_CHECK(EncodeEventBody(again.value()) == encoded, "re-encoding a decoded event is unstable");
  return 0;
}
