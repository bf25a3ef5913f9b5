// Fuzz target: a request frame from the network, as `reckon server` reads it. The bytes go
// through the same checks as a connection's (ParseFrame: the segment table, the segment count
// and size limits of FrameLimits, word alignment), then DecodeRequest (the traversal and
// nesting limits, the reserved id) and ValidateRequestFields (every identifier and text), with
// the server's default limits. Nothing may crash, and nothing may throw but what the server
// catches; a refused frame is fine.
#include <capnp/serialize.h>
#include <kj/exception.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "reckon/protocol/frame.h"
#include "reckon/api/server/request_decode.h"
#include "reckon/api/server/request_fields.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace reckon::api;
  const FrameLimits limits;
  auto frame = ParseFrame(std::span(reinterpret_cast<const std::byte*>(data), size), limits);
  if (!frame) return 0;
  capnp::FlatArrayMessageReader reader(frame.value().words(), limits.ReaderOptions());
  auto request = DecodeRequest(reader);
  if (!request) return 0;
  (void)request.value().getTimeoutMs();
  try {
    (void)ValidateRequestFields(request.value().getMethod());
  } catch (const kj::Exception&) {
    // A text that is not NUL-terminated passes totalSize() and throws when read; Service::Handle
    // catches that at its boundary and answers invalid_argument, as here.
  }
  return 0;
}
