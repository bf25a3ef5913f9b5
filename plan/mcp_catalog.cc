#include "reckon/plan/mcp_catalog.h"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <map>

#include "reckon/base/json_schema.h"
#include "reckon/contract/approval_rule.h"

namespace reckon {
namespace {

namespace json = boost::json;

constexpr std::string_view kNoContractApproval = "always";

// read_only < idempotent_write < deduplicated_write < non_repeatable_write.
int Strictness(SideEffect side_effect) {
  switch (side_effect) {
    case SideEffect::kReadOnly:
      return 0;
    case SideEffect::kIdempotentWrite:
      return 1;
    case SideEffect::kDeduplicatedWrite:
      return 2;
    case SideEffect::kNonRepeatableWrite:
      return 3;
  }
  return 3;
}

Error Malformed(std::string_view what) {
  return Err(Errc::kInvalidArgument, "MCP tools/list: " + std::string(what));
}

std::string Quote(std::string_view text) { return "'" + std::string(text) + "'"; }

// ---- Parsing ---------------------------------------------------------------------------------

struct ParsedTool {
  std::string name;
  std::string title;
  McpHints hints;
  const json::value* input_schema = nullptr;  // an object
};

struct ParsedCatalog {
  std::vector<ParsedTool> tools;
  std::optional<std::string> next_cursor;
};

// The object holding "tools": the value itself, or the "result" of a JSON-RPC response.
// `prefix` becomes "result." for the latter, so that messages name the real path.
Result<const json::object*> UnwrapResult(const json::value& value, std::string& prefix) {
  if (!value.is_object()) {
    return Malformed(std::string("must be a JSON object, got ") + JsonTypeName(value));
  }
  const json::object& object = value.as_object();
  bool json_rpc = object.contains("jsonrpc") || object.contains("error") ||
                  (object.contains("result") && !object.contains("tools"));
  if (!json_rpc) return &object;
  if (const json::value* error = object.if_contains("error")) {
    std::string message;
    if (error->is_object()) {
      if (const json::value* m = error->as_object().if_contains("message");
          m != nullptr && m->is_string()) {
        message = ": " + std::string(m->get_string());
      }
    }
    return Malformed("a JSON-RPC error response, not a result" + message);
  }
  const json::value* result = object.if_contains("result");
  if (result == nullptr) return Malformed("JSON-RPC response without \"result\"");
  if (!result->is_object()) {
    return Malformed(std::string("result: must be an object, got ") + JsonTypeName(*result));
  }
  prefix = "result.";
  return &result->as_object();
}

Result<std::optional<bool>> ParseHint(const json::object& annotations, std::string_view key,
                                      const std::string& where) {
  const json::value* hint = annotations.if_contains(key);
  if (hint == nullptr) return std::optional<bool>();
  if (!hint->is_bool()) {
    return Malformed(where + ": annotations." + std::string(key) + ": must be a boolean, got " +
                     JsonTypeName(*hint));
  }
  return std::optional<bool>(hint->get_bool());
}

Result<void> RequireStringIfPresent(const json::object& object, std::string_view key,
                                    const std::string& where) {
  const json::value* member = object.if_contains(key);
  if (member != nullptr && !member->is_string()) {
    return Malformed(where + ": " + std::string(key) + ": must be a string, got " +
                     JsonTypeName(*member));
  }
  return Ok();
}

Result<ParsedTool> ParseTool(const json::value& value, const std::string& index_label) {
  if (!value.is_object()) {
    return Malformed(index_label + ": must be an object, got " + JsonTypeName(value));
  }
  const json::object& tool = value.as_object();
  const json::value* name = tool.if_contains("name");
  if (name == nullptr) return Malformed(index_label + ": name: missing");
  if (!name->is_string()) {
    return Malformed(index_label + ": name: must be a string, got " + JsonTypeName(*name));
  }
  if (name->get_string().empty()) return Malformed(index_label + ": name: must not be empty");

  ParsedTool parsed;
  parsed.name = std::string(name->get_string());
  const std::string where = index_label + " (" + Quote(parsed.name) + ")";

  RECKON_TRY(RequireStringIfPresent(tool, "title", where));
  RECKON_TRY(RequireStringIfPresent(tool, "description", where));
  if (const json::value* title = tool.if_contains("title")) {
    parsed.title = std::string(title->get_string());
  }

  const json::value* schema = tool.if_contains("inputSchema");
  if (schema == nullptr) return Malformed(where + ": inputSchema: missing");
  if (!schema->is_object()) {
    return Malformed(where + ": inputSchema: must be an object, got " + JsonTypeName(*schema));
  }
  parsed.input_schema = schema;

  if (const json::value* annotations = tool.if_contains("annotations")) {
    if (!annotations->is_object()) {
      return Malformed(where + ": annotations: must be an object, got " +
                       JsonTypeName(*annotations));
    }
    const json::object& a = annotations->as_object();
    RECKON_TRY(parsed.hints.read_only, ParseHint(a, "readOnlyHint", where));
    RECKON_TRY(parsed.hints.destructive, ParseHint(a, "destructiveHint", where));
    RECKON_TRY(parsed.hints.idempotent, ParseHint(a, "idempotentHint", where));
    RECKON_TRY(parsed.hints.open_world, ParseHint(a, "openWorldHint", where));
    if (const json::value* title = a.if_contains("title")) {
      if (!title->is_string()) {
        return Malformed(where + ": annotations.title: must be a string, got " +
                         JsonTypeName(*title));
      }
      if (parsed.title.empty()) parsed.title = std::string(title->get_string());
    }
  }
  return parsed;
}

Result<ParsedCatalog> ParseCatalog(const json::value& tools_list) {
  std::string prefix;
  RECKON_TRY(const json::object* result, UnwrapResult(tools_list, prefix));
  const json::value* tools = result->if_contains("tools");
  if (tools == nullptr) return Malformed(prefix + "tools: missing");
  if (!tools->is_array()) {
    return Malformed(prefix + "tools: must be an array, got " + JsonTypeName(*tools));
  }
  ParsedCatalog catalog;
  if (const json::value* cursor = result->if_contains("nextCursor")) {
    if (!cursor->is_string()) {
      return Malformed(prefix + "nextCursor: must be a string, got " + JsonTypeName(*cursor));
    }
    catalog.next_cursor = std::string(cursor->get_string());
  }
  std::map<std::string, std::size_t, std::less<>> first_index;
  const json::array& array = tools->as_array();
  for (std::size_t i = 0; i < array.size(); ++i) {
    const std::string index_label = prefix + "tools[" + std::to_string(i) + "]";
    RECKON_TRY(ParsedTool tool, ParseTool(array[i], index_label));
    auto [it, inserted] = first_index.emplace(tool.name, i);
    if (!inserted) {
      return Malformed(index_label + " (" + Quote(tool.name) + "): name: duplicate of " + prefix +
                       "tools[" + std::to_string(it->second) + "]");
    }
    catalog.tools.push_back(std::move(tool));
  }
  return catalog;
}

// ---- Analysis --------------------------------------------------------------------------------

std::string HintText(std::string_view key, std::optional<bool> stated, bool default_value) {
  bool value = stated.value_or(default_value);
  std::string text = std::string(key) + (value ? " true" : " false");
  if (!stated) text += " (default)";
  return text;
}

// The hints that decided the suggested class: "readOnlyHint false (default), idempotentHint
// false (default), destructiveHint true (default)".
std::string WhyHintsSuggest(const McpHints& hints) {
  std::string text = HintText("readOnlyHint", hints.read_only, false);
  if (hints.ReadOnly()) return text;
  text += ", " + HintText("idempotentHint", hints.idempotent, false);
  if (hints.Idempotent()) return text;
  return text + ", " + HintText("destructiveHint", hints.destructive, true);
}

std::string Reason(const McpToolReport& tool) {
  const std::string suggested = std::string(SideEffectName(tool.suggested));
  const std::string why = " (" + WhyHintsSuggest(tool.hints) + ")";
  if (!tool.declared) {
    return "no contract: Reckon's default for it is non_repeatable_write with approval always "
           "required (a worker must declare a contract before plans can call it; the engine "
           "refuses calls to a tool without one); the hints suggest " +
           suggested + why + ", but hints never loosen that default";
  }
  const std::string declared = std::string(SideEffectName(*tool.declared));
  switch (tool.verdict) {
    case McpVerdict::kConsistent:
      return "contract declares " + declared + ", as the hints suggest" + why;
    case McpVerdict::kStricterThanHints:
      return "contract declares " + declared + ", stricter than the " + suggested +
             " the hints suggest" + why + "; the contract governs";
    case McpVerdict::kConflict:
      return "contract declares " + declared + ", looser than the " + suggested +
             " the hints suggest" + why +
             ": review the contract; it still governs, hints never loosen it";
    case McpVerdict::kNoContract:
      break;
  }
  return {};
}

// The top-level "required" names of a schema; nullopt (and a note) if it is not an array of
// strings. An absent "required" is an empty list.
std::optional<std::vector<std::string>> RequiredOf(const json::value& schema,
                                                   std::string_view whose,
                                                   std::vector<std::string>& notes) {
  std::vector<std::string> names;
  if (!schema.is_object()) return names;
  const json::value* required = schema.as_object().if_contains("required");
  if (required == nullptr) return names;
  bool well_formed = required->is_array();
  if (well_formed) {
    for (const json::value& name : required->as_array()) {
      if (!name.is_string()) {
        well_formed = false;
        break;
      }
      names.emplace_back(name.get_string());
    }
  }
  if (!well_formed) {
    notes.push_back("inputSchema: " + std::string(whose) +
                    " \"required\" is not an array of strings; required properties not compared");
    return std::nullopt;
  }
  return names;
}

const json::object* PropertiesOf(const json::value& schema) {
  if (!schema.is_object()) return nullptr;
  const json::value* properties = schema.as_object().if_contains("properties");
  if (properties == nullptr || !properties->is_object()) return nullptr;
  return &properties->as_object();
}

std::optional<std::string> TypeOf(const json::value& schema) {
  if (!schema.is_object()) return std::nullopt;
  const json::value* type = schema.as_object().if_contains("type");
  if (type == nullptr || !type->is_string()) return std::nullopt;
  return std::string(type->get_string());
}

bool Contains(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Notes where the catalog's inputSchema and the contract's input_schema disagree at the top
// level. A contract stricter than the catalog (requiring what the catalog leaves optional, an
// integer where the catalog takes any number) is not a mismatch.
void CompareInputSchemas(const json::value& catalog, const json::value& contract,
                         std::vector<std::string>& notes) {
  if (std::optional<std::string> type = TypeOf(catalog); type && *type != "object") {
    notes.push_back("inputSchema: the catalog's type is " + Quote(*type) + ", not 'object'");
  }
  auto catalog_required = RequiredOf(catalog, "the catalog's", notes);
  auto contract_required = RequiredOf(contract, "the contract's", notes);
  const json::object* catalog_properties = PropertiesOf(catalog);
  const json::object* contract_properties = PropertiesOf(contract);
  if (catalog_required && contract_required) {
    for (const std::string& name : *catalog_required) {
      if (!Contains(*contract_required, name)) {
        notes.push_back("inputSchema: the catalog requires " + Quote(name) +
                        ", which the contract's input_schema does not require");
      }
    }
    for (const std::string& name : *contract_required) {
      if (catalog_properties != nullptr && !catalog_properties->contains(name) &&
          !Contains(*catalog_required, name)) {
        notes.push_back("inputSchema: the contract requires " + Quote(name) +
                        ", which the catalog's inputSchema does not declare");
      }
    }
  }
  if (catalog_properties == nullptr || contract_properties == nullptr) return;
  for (const auto& member : *contract_properties) {
    const json::value* in_catalog = catalog_properties->if_contains(member.key());
    if (in_catalog == nullptr) continue;
    std::optional<std::string> contract_type = TypeOf(member.value());
    std::optional<std::string> catalog_type = TypeOf(*in_catalog);
    if (!contract_type || !catalog_type || *contract_type == *catalog_type) continue;
    if (*contract_type == "integer" && *catalog_type == "number") continue;
    notes.push_back("inputSchema: property " + Quote(member.key()) + " is " +
                    Quote(*catalog_type) + " in the catalog but " + Quote(*contract_type) +
                    " in the contract");
  }
}

McpToolReport AnalyzeTool(const ParsedTool& parsed, const ContractRegistry& declared) {
  McpToolReport tool;
  tool.name = parsed.name;
  tool.title = parsed.title;
  tool.hints = parsed.hints;
  tool.suggested = SuggestedSideEffect(parsed.hints);
  if (parsed.hints.ReadOnly() && parsed.hints.destructive.value_or(false)) {
    tool.notes.push_back(
        "destructiveHint true ignored: it means something only when readOnlyHint is false");
  }
  const ToolContract* contract = declared.Find(parsed.name);
  if (contract == nullptr) {
    tool.verdict = McpVerdict::kNoContract;
    tool.effective = SideEffect::kNonRepeatableWrite;
    tool.approval = std::string(kNoContractApproval);
  } else {
    tool.declared = contract->side_effect;
    int declared_strictness = Strictness(contract->side_effect);
    int suggested_strictness = Strictness(tool.suggested);
    tool.verdict = declared_strictness == suggested_strictness ? McpVerdict::kConsistent
                   : declared_strictness > suggested_strictness ? McpVerdict::kStricterThanHints
                                                                : McpVerdict::kConflict;
    // The contract governs, whatever the verdict: hints never loosen (or tighten) it.
    tool.effective = contract->side_effect;
    tool.approval = DescribeApprovalRule(contract->approval);
    CompareInputSchemas(*parsed.input_schema, contract->input_schema, tool.notes);
  }
  tool.reason = Reason(tool);
  return tool;
}

// ---- Rendering -------------------------------------------------------------------------------

std::string Pad(std::string_view text, std::size_t width) {
  std::string out(text);
  if (out.size() < width) out.append(width - out.size(), ' ');
  return out;
}

}  // namespace

std::string_view McpVerdictName(McpVerdict verdict) {
  switch (verdict) {
    case McpVerdict::kConsistent:
      return "consistent";
    case McpVerdict::kStricterThanHints:
      return "stricter_than_hints";
    case McpVerdict::kConflict:
      return "conflict";
    case McpVerdict::kNoContract:
      return "no_contract";
  }
  return "unknown";
}

SideEffect SuggestedSideEffect(const McpHints& hints) {
  if (hints.ReadOnly()) return SideEffect::kReadOnly;
  if (hints.Idempotent()) return SideEffect::kIdempotentWrite;
  return SideEffect::kNonRepeatableWrite;
}

std::size_t McpCatalogReport::Count(McpVerdict verdict) const {
  return static_cast<std::size_t>(std::count_if(
      tools.begin(), tools.end(), [verdict](const McpToolReport& t) { return t.verdict == verdict; }));
}

Result<McpCatalogReport> AnalyzeMcpCatalog(const boost::json::value& tools_list,
                                           const ContractRegistry& declared) {
  RECKON_TRY(ParsedCatalog catalog, ParseCatalog(tools_list));
  McpCatalogReport report;
  report.next_cursor = catalog.next_cursor;
  for (const ParsedTool& parsed : catalog.tools) {
    report.tools.push_back(AnalyzeTool(parsed, declared));
  }
  for (const ToolContract* contract : declared.All()) {
    bool listed = std::any_of(catalog.tools.begin(), catalog.tools.end(),
                              [contract](const ParsedTool& t) { return t.name == contract->name; });
    if (!listed) report.declared_not_in_catalog.push_back(contract->name);
  }
  return report;
}

std::string RenderMcpReport(const McpCatalogReport& report) {
  constexpr std::size_t kColumns = 6;
  using Row = std::array<std::string, kColumns>;
  std::vector<Row> rows;
  rows.push_back({"TOOL", "HINTS SUGGEST", "CONTRACT", "VERDICT", "EFFECTIVE", "APPROVAL"});
  for (const McpToolReport& tool : report.tools) {
    rows.push_back({tool.name, std::string(SideEffectName(tool.suggested)),
                    tool.declared ? std::string(SideEffectName(*tool.declared)) : "-",
                    std::string(McpVerdictName(tool.verdict)),
                    std::string(SideEffectName(tool.effective)), tool.approval});
  }
  std::array<std::size_t, kColumns> widths{};
  for (const Row& row : rows) {
    for (std::size_t c = 0; c < kColumns; ++c) widths[c] = std::max(widths[c], row[c].size());
  }

  std::string out = "MCP catalog: " + std::to_string(report.tools.size()) + " tools; ";
  for (McpVerdict verdict : {McpVerdict::kConsistent, McpVerdict::kStricterThanHints,
                             McpVerdict::kConflict, McpVerdict::kNoContract}) {
    if (verdict != McpVerdict::kConsistent) out += ", ";
    out += std::to_string(report.Count(verdict)) + " " + std::string(McpVerdictName(verdict));
  }
  out += "\n\n";
  for (const Row& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < kColumns; ++c) {
      line += c + 1 < kColumns ? Pad(row[c], widths[c] + 2) : row[c];
    }
    out += line + "\n";
  }
  out += "\n";
  for (const McpToolReport& tool : report.tools) {
    out += tool.name + (tool.verdict == McpVerdict::kConflict ? " [REVIEW]" : "") + ": " +
           tool.reason + "\n";
    for (const std::string& note : tool.notes) out += "  note: " + note + "\n";
  }
  if (!report.declared_not_in_catalog.empty()) {
    out += "\nDeclared contracts not in the catalog:";
    for (const std::string& name : report.declared_not_in_catalog) out += " " + name;
    out += "\n";
  }
  if (report.next_cursor) {
    out += "\nThe catalog is one page (nextCursor \"" + *report.next_cursor +
           "\"): tools on later pages are not analysed.\n";
  }
  out +=
      "\nAnnotations are hints: the effective class is always the contract's; a tool without a "
      "contract is non_repeatable_write with approval always required.\n";
  return out;
}

boost::json::value McpReportJson(const McpCatalogReport& report) {
  json::array tools;
  for (const McpToolReport& tool : report.tools) {
    json::object t;
    t["name"] = tool.name;
    if (!tool.title.empty()) t["title"] = tool.title;
    json::array defaulted;
    if (!tool.hints.read_only) defaulted.emplace_back("readOnlyHint");
    if (!tool.hints.destructive) defaulted.emplace_back("destructiveHint");
    if (!tool.hints.idempotent) defaulted.emplace_back("idempotentHint");
    if (!tool.hints.open_world) defaulted.emplace_back("openWorldHint");
    t["annotations"] = {{"readOnlyHint", tool.hints.ReadOnly()},
                        {"destructiveHint", tool.hints.Destructive()},
                        {"idempotentHint", tool.hints.Idempotent()},
                        {"openWorldHint", tool.hints.OpenWorld()}};
    t["defaulted"] = std::move(defaulted);
    t["suggested_class"] = SideEffectName(tool.suggested);
    if (tool.declared) {
      t["declared_class"] = SideEffectName(*tool.declared);
    } else {
      t["declared_class"] = nullptr;
    }
    t["verdict"] = McpVerdictName(tool.verdict);
    t["effective"] = {{"side_effect", SideEffectName(tool.effective)},
                      {"approval", tool.approval},
                      {"source", tool.declared ? "contract" : "no_contract_default"}};
    t["reason"] = tool.reason;
    json::array notes;
    for (const std::string& note : tool.notes) notes.emplace_back(note);
    t["notes"] = std::move(notes);
    tools.push_back(std::move(t));
  }
  json::object out;
  out["tools"] = std::move(tools);
  json::array absent;
  for (const std::string& name : report.declared_not_in_catalog) absent.emplace_back(name);
  out["declared_not_in_catalog"] = std::move(absent);
  if (report.next_cursor) out["next_cursor"] = *report.next_cursor;
  out["summary"] = {{"consistent", report.Count(McpVerdict::kConsistent)},
                    {"stricter_than_hints", report.Count(McpVerdict::kStricterThanHints)},
                    {"conflict", report.Count(McpVerdict::kConflict)},
                    {"no_contract", report.Count(McpVerdict::kNoContract)}};
  return out;
}

}  // namespace reckon
