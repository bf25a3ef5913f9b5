// MCP tool-catalog analysis: what an MCP server's `tools/list` says its tools do, set against
// the side-effect contracts this program declares for them (contract/contract.h).
//
// Input is a `tools/list` result, {"tools": [{"name", "title"?, "description"?, "inputSchema",
// "outputSchema"?, "annotations"?: {"title"?, "readOnlyHint"?, "destructiveHint"?,
// "idempotentHint"?, "openWorldHint"?}}], "nextCursor"?}, or the whole JSON-RPC response
// {"jsonrpc": "2.0", "id", "result": {...}} that carries it.
//
// Suggested class. MCP annotations are hints, with defaults that assume the worst when absent:
// readOnlyHint=false, destructiveHint=true, idempotentHint=false, openWorldHint=true;
// destructiveHint and idempotentHint mean something only when readOnlyHint is false (they are
// ignored when it is true; a stated destructiveHint true then earns a note). The class the
// hints suggest is:
//   readOnlyHint             -> read_only
//   else idempotentHint      -> idempotent_write
//   else                     -> non_repeatable_write  (destructive or additive: a repeat is a
//                                                      second effect)
// Hints never suggest deduplicated_write: that class depends on the provider honouring an
// idempotency key inside a window, and MCP describes neither keys nor windows, so no hint can
// vouch for it.
//
// Verdict, with strictness read_only < idempotent_write < deduplicated_write <
// non_repeatable_write:
//   consistent           the contract declares exactly the suggested class
//   stricter_than_hints  the contract is stricter than the hints: fine
//   conflict             the contract is LOOSER than the hints (declared read_only where the
//                        hints say it writes, idempotent_write where they say a repeat is a
//                        second effect, ...): a person should review the contract
//   no_contract          the tool has no declared contract
//
// The effective policy is ALWAYS the declared contract's, whatever the verdict: annotations
// come from the server, and the MCP spec tells clients not to trust them from untrusted
// servers, so they can flag a contract for review but never loosen it. A tool without a
// contract gets non_repeatable_write with approval always required (ToolContract's default
// class, the most cautious one), whatever its hints suggest.
//
// Also reported: declared contracts the catalog does not list (informational; if "nextCursor"
// is present the catalog is one page and they may be on a later one), and for each declared
// tool, differences between the catalog's inputSchema and the contract's input_schema in their
// top-level required properties (and the declared "type" of properties both name). Those are
// notes; they never fail the analysis.
//
// Pure: no I/O, stateless, thread-safe.
#pragma once

#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/contract/contract.h"
#include "reckon/contract/contract_registry.h"

namespace reckon {

enum class McpVerdict { kConsistent, kStricterThanHints, kConflict, kNoContract };

// "consistent", "stricter_than_hints", "conflict", "no_contract".
std::string_view McpVerdictName(McpVerdict verdict);

// The annotations as the catalog states them: nullopt where a hint is absent.
struct McpHints {
  std::optional<bool> read_only;
  std::optional<bool> destructive;
  std::optional<bool> idempotent;
  std::optional<bool> open_world;

  // With the MCP defaults applied.
  bool ReadOnly() const { return read_only.value_or(false); }
  bool Destructive() const { return destructive.value_or(true); }
  bool Idempotent() const { return idempotent.value_or(false); }
  bool OpenWorld() const { return open_world.value_or(true); }

  friend bool operator==(const McpHints&, const McpHints&) = default;
};

// The class the hints suggest (never kDeduplicatedWrite; see the top of this file).
SideEffect SuggestedSideEffect(const McpHints& hints);

struct McpToolReport {
  std::string name;
  std::string title;  // "title", else annotations.title, else empty
  McpHints hints;
  SideEffect suggested = SideEffect::kNonRepeatableWrite;
  std::optional<SideEffect> declared;  // the contract's class; nullopt without a contract
  McpVerdict verdict = McpVerdict::kNoContract;
  // What the engine will apply: the declared class, or non_repeatable_write without a contract.
  SideEffect effective = SideEffect::kNonRepeatableWrite;
  // DescribeApprovalRule of the contract's rule ("never", "when amount_cents > 10000"), or
  // "always" without a contract.
  std::string approval;
  std::string reason;               // one sentence explaining the verdict and the policy
  std::vector<std::string> notes;   // schema mismatches, ignored hints

  friend bool operator==(const McpToolReport&, const McpToolReport&) = default;
};

struct McpCatalogReport {
  std::vector<McpToolReport> tools;                  // in catalog order
  std::vector<std::string> declared_not_in_catalog;  // sorted by name
  std::optional<std::string> next_cursor;            // set: the catalog is one page of several

  std::size_t Count(McpVerdict verdict) const;

  friend bool operator==(const McpCatalogReport&, const McpCatalogReport&) = default;
};

// Analyses `tools_list` against `declared`. Errc::kInvalidArgument for a malformed catalog,
// naming the tool by index and name and the problem: "MCP tools/list: tools[2] ('send_email'):
// annotations.readOnlyHint: must be a boolean, got string". Malformed means: not an object
// (or a JSON-RPC error response), "tools" missing or not an array, a tool that is not an
// object, a name that is missing, not a string or empty, a duplicate name, an inputSchema
// missing or not an object, annotations not an object, a hint not a boolean, a title,
// description or nextCursor not a string. Unknown members are ignored.
Result<McpCatalogReport> AnalyzeMcpCatalog(const boost::json::value& tools_list,
                                           const ContractRegistry& declared);

// A table for people: one row per tool (tool, hints suggest, contract, verdict, effective
// class, approval), each row's reason and notes under it, then a summary and the declared
// contracts absent from the catalog. Ends with a newline.
std::string RenderMcpReport(const McpCatalogReport& report);

// {"tools": [{"name", "title"?, "annotations": {"readOnlyHint", "destructiveHint",
//   "idempotentHint", "openWorldHint"}, "defaulted": ["destructiveHint", ...],
//   "suggested_class", "declared_class": "..." | null, "verdict",
//   "effective": {"side_effect", "approval", "source": "contract" | "no_contract_default"},
//   "reason", "notes": [...]}],
//  "declared_not_in_catalog": [...], "next_cursor"?,
//  "summary": {"consistent", "stricter_than_hints", "conflict", "no_contract"}}
// "annotations" holds the hints with defaults applied; "defaulted" names those that were absent.
boost::json::value McpReportJson(const McpCatalogReport& report);

}  // namespace reckon
