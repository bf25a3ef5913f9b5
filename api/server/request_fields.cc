#include "reckon/api/server/request_fields.h"

#include "reckon/api/server/methods.h"

namespace reckon::api {

Result<void> ValidateRequestFields(wire::Request::Method::Reader method) {
  const MethodRow* row = FindMethod(method.which());
  if (row == nullptr) return Ok();
  return row->check_fields(method);
}

}  // namespace reckon::api
