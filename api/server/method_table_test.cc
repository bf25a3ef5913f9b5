// The method table (api/server/methods.h) against the schema and the surfaces that send its
// methods: every member of the Request's method union has exactly one row (found by schema
// reflection, so a new member without a row fails here), every row is sent by a route of the
// HTTP API (api/server/http/http_routes.h) or says why it is wire-only, every route that sends
// a method sends one with a row, and every row names a command that the built `reckon` has.
#include <capnp/schema.h>
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "reckon/protocol/reckon.capnp.h"
#include "reckon/api/server/http/http_routes.h"
#include "reckon/api/server/methods.h"
#include "tests/support/subprocess.h"

namespace reckon::api {
namespace {

using Method = wire::Request::Method;
using namespace std::chrono_literals;

std::string NameOf(const MethodRow& row) { return std::string(row.name); }

TEST(MethodTableTest, EveryUnionMemberHasOneRow) {
  const auto members = capnp::Schema::from<Method>().getUnionFields();
  for (auto member : members) {
    const std::string name = member.getProto().getName().cStr();
    const auto which = static_cast<Method::Which>(member.getProto().getDiscriminantValue());
    const MethodRow* row = FindMethod(which);
    ASSERT_NE(row, nullptr) << "the method union's member '" << name
                            << "' has no row in the method table (api/server/methods.cc): give "
                               "it its permission, fields, workflow, API and CLI command";
    EXPECT_EQ(row->name, name) << "the row of union member '" << name << "' names another";
  }
  std::set<Method::Which> seen;
  for (const MethodRow& row : MethodTable()) {
    EXPECT_TRUE(seen.insert(row.which).second) << NameOf(row) << " has two rows";
  }
  EXPECT_EQ(MethodTable().size(), members.size())
      << "the method table has a row for no member of the union";
}

TEST(MethodTableTest, EveryRowSaysWhatItIs) {
  for (const MethodRow& row : MethodTable()) {
    EXPECT_NE(row.check_fields, nullptr) << NameOf(row) << ": no field check (NoFields if none)";
    EXPECT_FALSE(row.cli.empty()) << NameOf(row) << ": no `reckon` command sends it";
    // Only whoAmI is open to any valid credential: it says who the credential is.
    EXPECT_EQ(row.permission.has_value(), row.which != Method::WHO_AM_I) << NameOf(row);
    // Cluster mode routes a client request by its workflow; a worker's or a principal's
    // method is served where it lands.
    if (row.api != MethodApi::kClient) {
      EXPECT_EQ(row.workflow_of, nullptr) << NameOf(row) << " is not a client method";
    }
  }
}

TEST(MethodTableTest, EveryRowHasAnHttpRouteOrSaysWhyNot) {
  for (const MethodRow& row : MethodTable()) {
    int routes = 0;
    for (const HttpRoute& route : HttpRoutes()) {
      if (route.method == row.which) ++routes;
    }
    if (row.wire_only.empty()) {
      EXPECT_GT(routes, 0) << NameOf(row) << " has no HTTP route: add one to the route table "
                           << "(api/server/http/http_routes.cc) or say in its row why it is "
                           << "wire-only";
    } else {
      EXPECT_EQ(routes, 0) << NameOf(row) << " is wire-only (" << row.wire_only
                           << ") yet an HTTP route sends it";
    }
  }
}

TEST(MethodTableTest, EveryRouteIsComplete) {
  std::set<std::pair<int, std::string_view>> seen;
  for (const HttpRoute& route : HttpRoutes()) {
    const std::string name = std::string(boost::beast::http::to_string(route.verb)) + " " +
                             std::string(route.pattern);
    EXPECT_TRUE(seen.insert({static_cast<int>(route.verb), route.pattern}).second)
        << name << " has two rows";
    if (route.own != HttpOwnRoute::kNone) {
      EXPECT_FALSE(route.method.has_value()) << name << " is HttpApi's own and sends a method";
      continue;
    }
    ASSERT_TRUE(route.method.has_value()) << name << " sends no method and is not HttpApi's own";
    EXPECT_NE(FindMethod(*route.method), nullptr) << name << " sends a method with no row";
    EXPECT_NE(route.build, nullptr) << name;
    EXPECT_NE(route.reply, nullptr) << name;
  }
}

TEST(MethodTableTest, MatchRouteFindsEachPatternAndNothingElse) {
  using boost::beast::http::verb;
  const HttpRoute* approve = MatchRoute(verb::post, {"runs", "r1", "operations", "op", "approve"});
  ASSERT_NE(approve, nullptr);
  EXPECT_EQ(approve->method, Method::DECIDE_APPROVAL);
  EXPECT_EQ(MatchRoute(verb::get, {"runs", "r1", "operations", "op", "approve"}), nullptr);
  EXPECT_EQ(MatchRoute(verb::get, {"runs", "r1", "nope"}), nullptr);
  EXPECT_EQ(MatchRoute(verb::get, {"runs", "r1", "history", "more"}), nullptr);
  EXPECT_EQ(MatchRoute(verb::get, {}), nullptr);
  ASSERT_NE(MatchRoute(verb::get, {"runs"}), nullptr);
  EXPECT_EQ(MatchRoute(verb::get, {"runs"})->method, Method::LIST_WORKFLOWS);
  ASSERT_NE(MatchRoute(verb::delete_, {"session"}), nullptr);
  EXPECT_EQ(MatchRoute(verb::delete_, {"session"})->own, HttpOwnRoute::kLogout);
}

std::vector<std::string> Words(std::string_view command) {
  std::vector<std::string> words;
  std::istringstream in{std::string(command)};
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// `reckon WORDS --help` prints the usage of that very command; for a command it does not have,
// CLI11 prints the parent's usage instead (and still exits 0).
TEST(MethodTableTest, EveryRowHasACliCommand) {
  std::set<std::string_view> commands;
  for (const MethodRow& row : MethodTable()) commands.insert(row.cli);
  for (std::string_view command : commands) {
    reckon::testing::SubprocessOptions options;
    options.args = Words(command);
    options.args.push_back("--help");
    auto child = reckon::testing::Subprocess::Start(RECKON_CLI_PATH, options);
    ASSERT_TRUE(child) << child.error().ToString();
    auto out = child.value().ReadAll(30s);
    ASSERT_TRUE(out) << out.error().ToString();
    auto status = child.value().Wait();
    ASSERT_TRUE(status) << status.error().ToString();
    EXPECT_TRUE(status.value().Succeeded()) << "reckon " << command << " --help";
    EXPECT_NE(out.value().find("Usage: reckon " + std::string(command) + " "), std::string::npos)
        << "the method table names `reckon " << command << "`, which the CLI (api/cli/) does "
        << "not have; its help printed:\n" << out.value();
  }
}

}  // namespace
}  // namespace reckon::api
