#include "reckon/plan/mcp_catalog.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "reckon/contract/testing/test_contracts.h"

namespace reckon {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing_contracts::Lookup;
using testing_contracts::Payout;

boost::json::value J(const std::string& text) { return boost::json::parse(text); }

// A one-tool catalog: `annotations` is a JSON object text or empty for none.
boost::json::value OneTool(const std::string& name, const std::string& annotations,
                           const std::string& input_schema = R"({"type":"object"})") {
  std::string tool = R"({"name":")" + name + R"(","inputSchema":)" + input_schema;
  if (!annotations.empty()) tool += R"(,"annotations":)" + annotations;
  return J(R"({"tools":[)" + tool + "}]}");
}

ToolContract Idempotent() {
  ToolContract c = Payout();
  c.name = "put_payee";
  c.side_effect = SideEffect::kIdempotentWrite;
  return c;
}

ToolContract Deduplicated() {
  ToolContract c = Payout();
  c.name = "charge_card";
  c.side_effect = SideEffect::kDeduplicatedWrite;
  c.retry.reconcile_on_unknown = false;
  c.dedup_window = 24h;
  return c;
}

ContractRegistry Registry() {
  ContractRegistry registry;
  for (const ToolContract& c : {Payout(), Lookup(), Idempotent(), Deduplicated()}) {
    auto registered = registry.Register(c);
    EXPECT_TRUE(registered) << registered.error().ToString();
  }
  return registry;
}

McpToolReport Analyze1(const boost::json::value& catalog) {
  auto report = AnalyzeMcpCatalog(catalog, Registry());
  EXPECT_TRUE(report) << report.error().ToString();
  EXPECT_EQ(report.value().tools.size(), 1u);
  return report.value().tools.at(0);
}

std::string ErrorOf(const boost::json::value& catalog) {
  auto report = AnalyzeMcpCatalog(catalog, Registry());
  EXPECT_FALSE(report);
  if (report) return "";
  EXPECT_EQ(report.error().code(), Errc::kInvalidArgument);
  return report.error().message();
}

TEST(McpHintsTest, AbsentAnnotationsTakeTheMcpDefaults) {
  McpHints none;
  EXPECT_FALSE(none.ReadOnly());
  EXPECT_TRUE(none.Destructive());
  EXPECT_FALSE(none.Idempotent());
  EXPECT_TRUE(none.OpenWorld());
  EXPECT_EQ(SuggestedSideEffect(none), SideEffect::kNonRepeatableWrite);

  McpToolReport tool = Analyze1(OneTool("unlisted", ""));
  EXPECT_EQ(tool.hints, McpHints{});
  EXPECT_EQ(tool.suggested, SideEffect::kNonRepeatableWrite);
  EXPECT_THAT(tool.reason, HasSubstr("readOnlyHint false (default), idempotentHint false "
                                     "(default), destructiveHint true (default)"));
  // An empty annotations object is the same as none.
  EXPECT_EQ(Analyze1(OneTool("unlisted", "{}")).hints, McpHints{});

  auto json = McpReportJson(AnalyzeMcpCatalog(OneTool("unlisted", ""), Registry()).value());
  const auto& t = json.at("tools").at(0);
  EXPECT_EQ(t.at("annotations"), J(R"({"readOnlyHint":false,"destructiveHint":true,
                                       "idempotentHint":false,"openWorldHint":true})"));
  EXPECT_EQ(t.at("defaulted"),
            J(R"(["readOnlyHint","destructiveHint","idempotentHint","openWorldHint"])"));
}

TEST(McpHintsTest, SuggestedClassFollowsReadOnlyThenIdempotent) {
  EXPECT_EQ(SuggestedSideEffect({.read_only = true}), SideEffect::kReadOnly);
  // destructiveHint and idempotentHint mean nothing when readOnlyHint is true.
  EXPECT_EQ(SuggestedSideEffect({.read_only = true, .destructive = true, .idempotent = false}),
            SideEffect::kReadOnly);
  EXPECT_EQ(SuggestedSideEffect({.idempotent = true}), SideEffect::kIdempotentWrite);
  EXPECT_EQ(SuggestedSideEffect({.read_only = false, .destructive = true, .idempotent = true}),
            SideEffect::kIdempotentWrite);
  // Additive but not idempotent: a repeat is still a second effect.
  EXPECT_EQ(SuggestedSideEffect({.destructive = false, .idempotent = false}),
            SideEffect::kNonRepeatableWrite);
  // Never deduplicated_write, whatever the hints.
  for (int bits = 0; bits < 16; ++bits) {
    McpHints h{.read_only = (bits & 1) != 0, .destructive = (bits & 2) != 0,
               .idempotent = (bits & 4) != 0, .open_world = (bits & 8) != 0};
    EXPECT_NE(SuggestedSideEffect(h), SideEffect::kDeduplicatedWrite);
  }

  McpToolReport tool = Analyze1(
      OneTool("get_payee", R"({"readOnlyHint":true,"destructiveHint":true})",
              R"({"type":"object","required":["payee"]})"));
  EXPECT_EQ(tool.suggested, SideEffect::kReadOnly);
  EXPECT_THAT(tool.notes, ElementsAre(HasSubstr("destructiveHint true ignored")));
  // A consistent read-only annotation earns no note.
  EXPECT_THAT(Analyze1(OneTool("get_payee", R"({"readOnlyHint":true,"destructiveHint":false})",
                               R"({"type":"object","required":["payee"]})"))
                  .notes,
              IsEmpty());
}

TEST(McpCatalogTest, Consistent) {
  McpToolReport tool = Analyze1(OneTool("get_payee", R"({"readOnlyHint":true})",
                                        R"({"type":"object","required":["payee"]})"));
  EXPECT_EQ(tool.verdict, McpVerdict::kConsistent);
  EXPECT_EQ(tool.declared, SideEffect::kReadOnly);
  EXPECT_EQ(tool.effective, SideEffect::kReadOnly);
  EXPECT_EQ(tool.approval, "never");
  EXPECT_THAT(tool.notes, IsEmpty());

  EXPECT_EQ(Analyze1(OneTool("put_payee", R"({"idempotentHint":true})")).verdict,
            McpVerdict::kConsistent);
  EXPECT_EQ(Analyze1(OneTool("send_payout", R"({"destructiveHint":false})")).verdict,
            McpVerdict::kConsistent);
}

TEST(McpCatalogTest, StricterThanHintsIsFine) {
  McpToolReport tool = Analyze1(OneTool("send_payout", R"({"idempotentHint":true})"));
  EXPECT_EQ(tool.verdict, McpVerdict::kStricterThanHints);
  EXPECT_EQ(tool.suggested, SideEffect::kIdempotentWrite);
  EXPECT_THAT(tool.reason, HasSubstr("stricter than the idempotent_write the hints suggest"));
  // deduplicated_write is stricter than idempotent_write.
  EXPECT_EQ(Analyze1(OneTool("charge_card", R"({"idempotentHint":true})")).verdict,
            McpVerdict::kStricterThanHints);
  EXPECT_EQ(Analyze1(OneTool("put_payee", R"({"readOnlyHint":true})")).verdict,
            McpVerdict::kStricterThanHints);
}

TEST(McpCatalogTest, ContractLooserThanHintsIsAConflict) {
  // Declared read_only, hints say not read-only (explicitly, or by default).
  for (const char* annotations :
       {R"({"readOnlyHint":false,"destructiveHint":true})", "", R"({"idempotentHint":true})"}) {
    McpToolReport tool = Analyze1(OneTool("get_payee", annotations));
    EXPECT_EQ(tool.verdict, McpVerdict::kConflict) << annotations;
    EXPECT_THAT(tool.reason, HasSubstr("contract declares read_only, looser than"));
    EXPECT_THAT(tool.reason, HasSubstr("review the contract"));
  }
  // Declared idempotent_write, hints say destructive and not idempotent.
  McpToolReport idem =
      Analyze1(OneTool("put_payee", R"({"destructiveHint":true,"idempotentHint":false})"));
  EXPECT_EQ(idem.verdict, McpVerdict::kConflict);
  EXPECT_EQ(idem.suggested, SideEffect::kNonRepeatableWrite);
  // Declared deduplicated_write: no hint can vouch for keys, so non-idempotent hints conflict.
  EXPECT_EQ(Analyze1(OneTool("charge_card", R"({"idempotentHint":false})")).verdict,
            McpVerdict::kConflict);
}

TEST(McpCatalogTest, TheEffectiveClassIsAlwaysTheContracts) {
  // Hints that would loosen a non_repeatable_write never change its policy.
  for (const char* annotations :
       {R"({"readOnlyHint":true})", R"({"idempotentHint":true,"destructiveHint":false})"}) {
    McpToolReport tool = Analyze1(OneTool("send_payout", annotations));
    EXPECT_EQ(tool.verdict, McpVerdict::kStricterThanHints) << annotations;
    EXPECT_EQ(tool.effective, SideEffect::kNonRepeatableWrite) << annotations;
    EXPECT_EQ(tool.approval, "when amount_cents > 10000") << annotations;
    EXPECT_THAT(tool.reason, HasSubstr("the contract governs"));
  }
  // A conflict flags the contract for review but does not tighten it either: the contract is
  // the one policy, and changing it is a person's decision.
  McpToolReport conflict = Analyze1(OneTool("get_payee", R"({"readOnlyHint":false})"));
  EXPECT_EQ(conflict.verdict, McpVerdict::kConflict);
  EXPECT_EQ(conflict.effective, SideEffect::kReadOnly);
  EXPECT_THAT(conflict.reason, HasSubstr("it still governs, hints never loosen it"));
}

TEST(McpCatalogTest, NoContractIsNonRepeatableWithApprovalAlways) {
  // Even a tool whose hints say read-only and idempotent.
  for (const char* annotations :
       {"", R"({"readOnlyHint":true})", R"({"idempotentHint":true,"destructiveHint":false})"}) {
    McpToolReport tool = Analyze1(OneTool("delete_customer", annotations));
    EXPECT_EQ(tool.verdict, McpVerdict::kNoContract) << annotations;
    EXPECT_EQ(tool.declared, std::nullopt);
    EXPECT_EQ(tool.effective, SideEffect::kNonRepeatableWrite) << annotations;
    EXPECT_EQ(tool.approval, "always");
    EXPECT_THAT(tool.reason, HasSubstr("non_repeatable_write with approval always required"));
  }
  auto json =
      McpReportJson(AnalyzeMcpCatalog(OneTool("send_email", ""), Registry()).value());
  EXPECT_EQ(json.at("tools").at(0).at("effective"),
            J(R"({"side_effect":"non_repeatable_write","approval":"always",
                  "source":"no_contract_default"})"));
  EXPECT_TRUE(json.at("tools").at(0).at("declared_class").is_null());
}

TEST(McpCatalogTest, AcceptsTheJsonRpcResponse) {
  const std::string tools =
      R"({"tools":[{"name":"get_payee","inputSchema":{"type":"object","required":["payee"]},
                    "annotations":{"readOnlyHint":true}}],"nextCursor":"page-2"})";
  auto bare = AnalyzeMcpCatalog(J(tools), Registry());
  auto wrapped =
      AnalyzeMcpCatalog(J(R"({"jsonrpc":"2.0","id":7,"result":)" + tools + "}"), Registry());
  ASSERT_TRUE(bare) << bare.error().ToString();
  ASSERT_TRUE(wrapped) << wrapped.error().ToString();
  EXPECT_EQ(bare.value(), wrapped.value());
  EXPECT_EQ(wrapped.value().next_cursor, "page-2");
  EXPECT_EQ(wrapped.value().tools.at(0).verdict, McpVerdict::kConsistent);

  EXPECT_EQ(ErrorOf(J(R"({"jsonrpc":"2.0","id":7,"result":{"tools":{}}})")),
            "MCP tools/list: result.tools: must be an array, got object");
  EXPECT_EQ(ErrorOf(J(R"({"jsonrpc":"2.0","id":7})")),
            "MCP tools/list: JSON-RPC response without \"result\"");
  EXPECT_EQ(ErrorOf(J(R"({"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"nope"}})")),
            "MCP tools/list: a JSON-RPC error response, not a result: nope");
}

TEST(McpCatalogTest, MalformedCatalogsNameTheToolAndTheProblem) {
  const std::string ok = R"({"name":"a","inputSchema":{}})";
  auto catalog = [&](const std::string& second) {
    return J(R"({"tools":[)" + ok + "," + second + "]}");
  };
  EXPECT_EQ(ErrorOf(J("[]")), "MCP tools/list: must be a JSON object, got array");
  EXPECT_EQ(ErrorOf(J("{}")), "MCP tools/list: tools: missing");
  EXPECT_EQ(ErrorOf(J(R"({"tools":"x"})")), "MCP tools/list: tools: must be an array, got string");
  EXPECT_EQ(ErrorOf(catalog("3")), "MCP tools/list: tools[1]: must be an object, got integer");
  EXPECT_EQ(ErrorOf(catalog(R"({"inputSchema":{}})")), "MCP tools/list: tools[1]: name: missing");
  EXPECT_EQ(ErrorOf(catalog(R"({"name":5,"inputSchema":{}})")),
            "MCP tools/list: tools[1]: name: must be a string, got integer");
  EXPECT_EQ(ErrorOf(catalog(R"({"name":"","inputSchema":{}})")),
            "MCP tools/list: tools[1]: name: must not be empty");
  EXPECT_EQ(ErrorOf(catalog(ok)),
            "MCP tools/list: tools[1] ('a'): name: duplicate of tools[0]");
  EXPECT_EQ(ErrorOf(catalog(R"({"name":"b"})")),
            "MCP tools/list: tools[1] ('b'): inputSchema: missing");
  EXPECT_EQ(ErrorOf(catalog(R"({"name":"b","inputSchema":true})")),
            "MCP tools/list: tools[1] ('b'): inputSchema: must be an object, got boolean");
  EXPECT_EQ(ErrorOf(catalog(R"({"name":"b","inputSchema":{},"annotations":[]})")),
            "MCP tools/list: tools[1] ('b'): annotations: must be an object, got array");
  EXPECT_EQ(
      ErrorOf(catalog(R"({"name":"b","inputSchema":{},"annotations":{"readOnlyHint":"yes"}})")),
      "MCP tools/list: tools[1] ('b'): annotations.readOnlyHint: must be a boolean, got string");
  EXPECT_EQ(
      ErrorOf(catalog(R"({"name":"b","inputSchema":{},"annotations":{"idempotentHint":1}})")),
      "MCP tools/list: tools[1] ('b'): annotations.idempotentHint: must be a boolean, got "
      "integer");
  EXPECT_EQ(ErrorOf(catalog(R"({"name":"b","inputSchema":{},"title":7})")),
            "MCP tools/list: tools[1] ('b'): title: must be a string, got integer");
  EXPECT_EQ(ErrorOf(J(R"({"tools":[],"nextCursor":3})")),
            "MCP tools/list: nextCursor: must be a string, got integer");
}

TEST(McpCatalogTest, NotesInputSchemaMismatchesWithoutFailing) {
  // Payout requires payee and amount_cents; amount_cents is an integer.
  McpToolReport tool = Analyze1(OneTool("send_payout", "", R"({
      "type": "object",
      "required": ["payee", "currency"],
      "properties": {"payee": {"type": "string"}, "currency": {"type": "string"},
                     "memo": {"type": "integer"}}})"));
  EXPECT_EQ(tool.verdict, McpVerdict::kConsistent);
  EXPECT_THAT(tool.notes,
              ElementsAre("inputSchema: the catalog requires 'currency', which the contract's "
                          "input_schema does not require",
                          "inputSchema: the contract requires 'amount_cents', which the "
                          "catalog's inputSchema does not declare",
                          "inputSchema: property 'memo' is 'integer' in the catalog but 'string' "
                          "in the contract"));

  // A contract stricter than the catalog is compatible: it requires what the catalog leaves
  // optional, and takes only integers where the catalog takes any number.
  McpToolReport stricter = Analyze1(OneTool("send_payout", "", R"({
      "type": "object",
      "required": ["payee"],
      "properties": {"payee": {"type": "string"}, "amount_cents": {"type": "number"}}})"));
  EXPECT_THAT(stricter.notes, IsEmpty());

  McpToolReport odd = Analyze1(OneTool("send_payout", "", R"({"required": "payee"})"));
  EXPECT_THAT(odd.notes, ElementsAre(HasSubstr("the catalog's \"required\" is not an array")));
}

TEST(McpCatalogTest, ReportsDeclaredContractsAbsentFromTheCatalog) {
  auto report = AnalyzeMcpCatalog(OneTool("get_payee", R"({"readOnlyHint":true})"), Registry());
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_THAT(report.value().declared_not_in_catalog,
              ElementsAre("charge_card", "put_payee", "send_payout"));
  EXPECT_EQ(report.value().next_cursor, std::nullopt);
}

TEST(McpCatalogTest, RendersATableAndJson) {
  auto report = AnalyzeMcpCatalog(J(R"({"tools":[
      {"name":"get_payee","title":"Get payee","inputSchema":{"type":"object","required":["payee"]},
       "annotations":{"readOnlyHint":true}},
      {"name":"send_payout","inputSchema":{"type":"object"},"annotations":{"idempotentHint":true}},
      {"name":"put_payee","inputSchema":{"type":"object"}},
      {"name":"send_email","inputSchema":{"type":"object"}}],
      "nextCursor":"c2"})"),
                                   Registry());
  ASSERT_TRUE(report) << report.error().ToString();
  std::string text = RenderMcpReport(report.value());
  EXPECT_THAT(text, HasSubstr("MCP catalog: 4 tools; 1 consistent, 1 stricter_than_hints, "
                              "1 conflict, 1 no_contract"));
  EXPECT_THAT(text, HasSubstr("TOOL         HINTS SUGGEST         CONTRACT"));
  EXPECT_THAT(text, HasSubstr("send_email   non_repeatable_write  -                     "
                              "no_contract          non_repeatable_write  always\n"));
  EXPECT_THAT(text, HasSubstr("put_payee [REVIEW]: contract declares idempotent_write"));
  EXPECT_THAT(text, HasSubstr("Declared contracts not in the catalog: charge_card\n"));
  EXPECT_THAT(text, HasSubstr("nextCursor \"c2\""));
  EXPECT_EQ(text.back(), '\n');

  auto json = McpReportJson(report.value());
  EXPECT_EQ(json.at("summary"), J(R"({"consistent":1,"stricter_than_hints":1,"conflict":1,
                                      "no_contract":1})"));
  EXPECT_EQ(json.at("declared_not_in_catalog"), J(R"(["charge_card"])"));
  EXPECT_EQ(json.at("next_cursor"), "c2");
  const auto& first = json.at("tools").at(0);
  EXPECT_EQ(first.at("title"), "Get payee");
  EXPECT_EQ(first.at("suggested_class"), "read_only");
  EXPECT_EQ(first.at("declared_class"), "read_only");
  EXPECT_EQ(first.at("verdict"), "consistent");
  EXPECT_EQ(first.at("defaulted"), J(R"(["destructiveHint","idempotentHint","openWorldHint"])"));
  EXPECT_EQ(first.at("effective").at("source"), "contract");
  const auto& second = json.at("tools").at(1);
  EXPECT_EQ(second.at("effective").at("side_effect"), "non_repeatable_write");
  EXPECT_EQ(second.at("verdict"), "stricter_than_hints");
}

}  // namespace
}  // namespace reckon
