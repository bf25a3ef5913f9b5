// The route table of the HTTP API (docs/HTTP_API.md): one row per verb and path under
// /api/v1/, saying which protocol method of the method table (api/server/methods.h) the route
// sends, how it builds that request from the path, the query and the JSON body, and what JSON
// it answers with; or, for the few routes that are more than one method (the console session,
// the inbox, the MCP catalog check), which of HttpApi's own handlers serves it. HttpApi
// (http_api.h) matches a request against the table and runs the row; what every route shares
// (the JSON content type of a POST, the caller, CSRF) happens there, before the row.
//
// Immutable data and pure functions; thread-safe.
#pragma once

#include <boost/beast/http/verb.hpp>
#include <boost/json.hpp>

#include <chrono>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reckon/protocol/reckon.capnp.h"
#include "reckon/base/error.h"

namespace reckon::api {

// What a route reads to build its request. References must outlive the build.
struct RouteInput {
  const std::vector<std::string>& at;                 // path segments after /api/v1/
  const std::map<std::string, std::string>& query;    // query parameters
  const boost::json::object& body;                    // {} unless the verb changes state
  std::chrono::milliseconds timeout;                  // the call's deadline; a route may change it
  Result<void> bad = Ok();                            // the input's fault, reported instead

  // Query parameter `name`; "" when absent.
  std::string Param(const std::string& name) const;
  // String member `name` of the body; "" when absent. Not a string: `bad` says so.
  std::string Text(std::string_view name);
  // Member `name` of the body as JSON text; "" when absent.
  std::string Json(std::string_view name) const;
};

// The routes HttpApi serves itself: more than one protocol call, or a console session.
enum class HttpOwnRoute {
  kNone,         // the route sends its row's protocol method
  kLogin,        // POST session: the token, as whoAmI, for a session cookie
  kSessionInfo,  // GET session
  kLogout,       // DELETE session
  kInbox,        // GET inbox: listWorkflows, listContracts, describeWorkflow per run
  kCheckMcp,     // POST contracts/check-mcp: listContracts, then the catalog analysis
};

struct HttpRoute {
  boost::beast::http::verb verb;
  std::string_view pattern;  // segments after /api/v1/; "*" matches any one segment
  // The protocol method the route sends (kNone routes only); nullopt for HttpApi's own.
  std::optional<wire::Request::Method::Which> method;
  HttpOwnRoute own;
  // Fills the request's method from `in`; a bad input goes into in.bad (kNone routes only).
  void (*build)(RouteInput& in, wire::Request::Method::Builder out);
  // The JSON body of the reply to a successful call (kNone routes only).
  Result<boost::json::value> (*reply)(wire::Response::Result::Reader result);
};

// Every route.
std::span<const HttpRoute> HttpRoutes();

// The route of `verb` and path segments `at` (after /api/v1/); nullptr when none matches.
const HttpRoute* MatchRoute(boost::beast::http::verb verb, const std::vector<std::string>& at);

}  // namespace reckon::api
