// JSON in and out of the HTTP API (docs/HTTP_API.md): the members HttpApi and its routes read
// from a request body, and the JSON of the protocol replies they answer with. HttpApi
// (http_api.h) and the routes (http_routes.h) use these.
//
// Pure functions; thread-safe. A reader must be valid for the call only.
#pragma once

#include <boost/json.hpp>

#include <string>
#include <string_view>

#include "reckon/protocol/reckon.capnp.h"
#include "reckon/base/error.h"

namespace reckon::api {

// A string member of `body`; "" when absent or null. Errc::kInvalidArgument naming it when it
// is not a string.
Result<std::string> StringField(const boost::json::object& body, std::string_view name);

// A member of `body` serialized to text for the wire; "" when absent.
std::string JsonField(const boost::json::object& body, std::string_view name);

// A run in detail: summary, input, result, operations, children, parent, cancel request.
boost::json::object DetailJson(wire::WorkflowDetail::Reader detail);

// A principal with its roles and the permissions they grant.
boost::json::object PrincipalJson(wire::PrincipalInfo::Reader principal);

// Journaled events, each with its decoded fields; the error of the first event whose payload
// does not decode.
Result<boost::json::array> EventsJson(capnp::List<wire::HistoryEvent>::Reader events);

}  // namespace reckon::api
