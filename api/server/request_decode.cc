#include "reckon/api/server/request_decode.h"

#include <kj/exception.h>

#include <string>

#include "reckon/protocol/close_reason.h"

namespace reckon::api {

Result<wire::Request::Reader> DecodeRequest(capnp::FlatArrayMessageReader& reader) {
  wire::Request::Reader request;
  std::uint64_t id = 0;
  try {
    request = reader.getRoot<wire::Request>();
    // Walks every pointer of the message once, within the traversal limit: a malformed
    // message fails here, before any handler sees it.
    (void)request.totalSize();
    id = request.getId();
  } catch (const kj::Exception& e) {
    return Err(Errc::kInvalidArgument,
               "malformed request: " + std::string(e.getDescription().cStr()));
  }
  if (id == kCloseReasonId) {
    return Err(Errc::kInvalidArgument,
               "request id 0 is reserved for the server's close reason; number requests "
               "from 1");
  }
  return request;
}

}  // namespace reckon::api
