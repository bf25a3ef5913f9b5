#include "reckon/protocol/close_reason.h"

#include <capnp/message.h>

#include "reckon/protocol/client.h"
#include "reckon/protocol/reckon.capnp.h"

namespace reckon::api {

Frame EncodeCloseReason(const Error& reason) {
  capnp::MallocMessageBuilder message(64);
  auto response = message.initRoot<wire::Response>();
  response.setId(kCloseReasonId);
  ToWire(reason, response.initResult().initError());
  return EncodeFrame(message);
}

}  // namespace reckon::api
