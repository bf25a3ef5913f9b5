#include "reckon/tools/mcp/mcp_contracts.h"

#include <boost/json/serialize.hpp>

#include <fstream>
#include <set>
#include <sstream>

#include "reckon/base/jcs.h"
#include "reckon/contract/contract_json.h"
#include "reckon/contract/field_path.h"
#include "reckon/contract/operation_id_facts.h"

namespace reckon::tools {
namespace json = boost::json;

namespace {

// Collects the problems of one file, each on its own line.
class Problems {
 public:
  void Add(const std::string& where, const std::string& what) { lines_.push_back(where + ": " + what); }
  bool empty() const { return lines_.empty(); }
  Error ToError(const std::string& source) const {
    std::string message = source + ": " + std::to_string(lines_.size()) +
                          " problem(s) in the MCP contracts file; nothing was started:";
    for (const std::string& line : lines_) message += "\n  " + line;
    return Err(Errc::kInvalidArgument, std::move(message));
  }

 private:
  std::vector<std::string> lines_;
};

// Members of `object` not in `known`, each a problem.
void UnknownMembers(const json::object& object, std::initializer_list<std::string_view> known,
                    const std::string& where, Problems& problems) {
  for (const auto& member : object) {
    bool found = false;
    for (std::string_view k : known) found = found || member.key() == k;
    if (!found) {
      problems.Add(where + std::string(member.key()), "unknown field (a misspelling?)");
    }
  }
}

// An optional non-empty string member; "" when absent.
std::string OptionalString(const json::object& object, std::string_view key,
                           const std::string& where, Problems& problems) {
  const json::value* value = object.if_contains(key);
  if (value == nullptr) return "";
  if (!value->is_string() || value->as_string().empty()) {
    problems.Add(where + std::string(key), "must be a non-empty string");
    return "";
  }
  return std::string(value->as_string());
}

std::string OptionalPath(const json::object& object, std::string_view key,
                         const std::string& where, Problems& problems) {
  std::string path = OptionalString(object, key, where, problems);
  if (!path.empty() && !IsValidFieldPath(path)) {
    problems.Add(where + std::string(key), "'" + path + "' is not a dotted field path (as refund.refund_id)");
    return "";
  }
  return path;
}

std::vector<std::string> StringList(const json::object& object, std::string_view key,
                                    const std::string& where, Problems& problems) {
  std::vector<std::string> out;
  const json::value* value = object.if_contains(key);
  if (value == nullptr) return out;
  if (!value->is_array()) {
    problems.Add(where + std::string(key), "must be an array of strings");
    return out;
  }
  for (const json::value& item : value->as_array()) {
    if (!item.is_string() || item.as_string().empty()) {
      problems.Add(where + std::string(key), "must be an array of non-empty strings");
      return {};
    }
    out.emplace_back(item.as_string());
  }
  return out;
}

McpLookupBinding ParseLookup(const json::object& object, const std::string& tool,
                             const std::string& where, Problems& problems) {
  UnknownMembers(object,
                 {"tool", kMcpOperationIdArgumentMember, "arguments", "input_arguments", "status_field",
                  "committed", "not_found", "not_found_codes", "output_field",
                  "provider_ref_field"},
                 where, problems);
  McpLookupBinding lookup;
  lookup.tool = OptionalString(object, "tool", where, problems);
  if (lookup.tool.empty() && !object.contains("tool")) {
    problems.Add(where + "tool", "required: the MCP tool that finds an operation by its id");
  } else if (lookup.tool == tool) {
    problems.Add(where + "tool", "the lookup must be another tool than '" + tool + "' itself");
  }
  lookup.operation_id_argument =
      OptionalString(object, kMcpOperationIdArgumentMember, where, problems);
  if (const json::value* arguments = object.if_contains("arguments")) {
    if (arguments->is_object()) {
      lookup.arguments = arguments->as_object();
    } else {
      problems.Add(where + "arguments", "must be an object of constant arguments");
    }
  }
  if (const json::value* inputs = object.if_contains("input_arguments")) {
    if (!inputs->is_object()) {
      problems.Add(where + "input_arguments", "must be an object: argument name -> input field path");
    } else {
      for (const auto& [name, path] : inputs->as_object()) {
        if (!path.is_string() || !IsValidFieldPath(path.as_string())) {
          problems.Add(where + "input_arguments." + std::string(name),
                       "must be a dotted path of the tool's input (as payment_id)");
        } else {
          lookup.input_arguments[std::string(name)] = std::string(path.as_string());
        }
      }
    }
  }
  lookup.status_field = OptionalPath(object, "status_field", where, problems);
  if (!object.contains("status_field")) {
    problems.Add(where + "status_field", "required: the field of the lookup's output that tells "
                                         "committed from not found");
  }
  lookup.committed = StringList(object, "committed", where, problems);
  if (lookup.committed.empty()) {
    problems.Add(where + "committed", "required: the status values that mean the operation happened");
  }
  lookup.not_found = StringList(object, "not_found", where, problems);
  lookup.not_found_codes = StringList(object, "not_found_codes", where, problems);
  if (lookup.not_found.empty() && lookup.not_found_codes.empty()) {
    problems.Add(where + "not_found",
                 "give the status values (or not_found_codes) that mean the operation did not "
                 "happen; without them a lookup can never allow a retry");
  }
  for (const std::string& value : lookup.committed) {
    for (const std::string& other : lookup.not_found) {
      if (value == other) problems.Add(where + "not_found", "'" + value + "' is also in committed");
    }
  }
  lookup.output_field = OptionalPath(object, "output_field", where, problems);
  lookup.provider_ref_field = OptionalPath(object, "provider_ref_field", where, problems);
  return lookup;
}

McpToolBinding ParseBinding(const json::object& object, const std::string& tool,
                            const std::string& where, Problems& problems) {
  UnknownMembers(object, {kMcpOperationIdArgumentMember, "provider_ref_field", "lookup"}, where,
                 problems);
  McpToolBinding binding;
  binding.operation_id_argument =
      OptionalString(object, kMcpOperationIdArgumentMember, where, problems);
  binding.provider_ref_field = OptionalPath(object, "provider_ref_field", where, problems);
  if (const json::value* lookup = object.if_contains("lookup")) {
    if (lookup->is_object()) {
      binding.lookup = ParseLookup(lookup->as_object(), tool, where + "lookup.", problems);
    } else {
      problems.Add(where + "lookup", "must be an object");
    }
  }
  return binding;
}

std::string NameOf(const json::value& contract) {
  if (const json::object* object = contract.if_object()) {
    if (const json::value* name = object->if_contains("name"); name != nullptr && name->is_string()) {
      return std::string(name->as_string());
    }
  }
  return "";
}

}  // namespace

const McpBoundContract* McpContracts::Find(const std::string& name) const {
  for (const McpBoundContract& tool : tools) {
    if (tool.contract.name == name) return &tool;
  }
  return nullptr;
}

Result<McpContracts> ParseMcpContracts(const json::value& file, const std::string& source) {
  if (!file.is_array()) {
    return Err(Errc::kInvalidArgument,
               source + ": expected a JSON array of tool contracts, each a contract or "
                        "{\"contract\": {...}, \"mcp\": {...}}");
  }
  Problems problems;
  McpContracts out;
  std::set<std::string> names;
  const json::array& entries = file.as_array();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    std::string where = "entry [" + std::to_string(i) + "]";
    const json::object* entry = entries[i].if_object();
    if (entry == nullptr) {
      problems.Add(where, "must be an object: a contract, or {\"contract\", \"mcp\"}");
      continue;
    }
    const json::value* contract_json = &entries[i];
    const json::object* mcp = nullptr;
    const bool wrapped = entry->contains("contract");
    if (wrapped) {
      contract_json = &entry->at("contract");
      if (const std::string name = NameOf(*contract_json); !name.empty()) where = "tool '" + name + "'";
      UnknownMembers(*entry, {"contract", "mcp", "name", "hash", "side_effect"}, where + ": ", problems);
      if (const json::value* binding = entry->if_contains("mcp")) {
        if (binding->is_object()) {
          mcp = &binding->as_object();
        } else {
          problems.Add(where + ": mcp", "must be an object");
        }
      }
    } else if (const std::string name = NameOf(*contract_json); !name.empty()) {
      where = "tool '" + name + "'";
    }
    auto contract = ContractFromJson(*contract_json);
    if (!contract) {
      problems.Add(where, contract.error().message());
      continue;
    }
    McpBoundContract bound{std::move(contract).value(), {}};
    const std::string& name = bound.contract.name;
    if (mcp != nullptr) bound.mcp = ParseBinding(*mcp, name, where + ": mcp.", problems);
    Result<void> valid = ValidateContract(bound.contract);
    if (!valid) problems.Add(where, valid.error().message());
    const bool lookup_mode = bound.contract.reconcile.mode == ReconcileMode::kLookup;
    if (lookup_mode && !bound.mcp.lookup) {
      problems.Add(where + ": mcp.lookup",
                   "required: reconcile.mode is lookup, so name the MCP tool that finds an "
                   "operation by its id (or set reconcile.mode to needs_human)");
    } else if (!lookup_mode && bound.mcp.lookup) {
      problems.Add(where + ": mcp.lookup",
                   std::string("given, but reconcile.mode is '") +
                       std::string(ReconcileModeName(bound.contract.reconcile.mode)) +
                       "': set reconcile.mode to lookup, or remove mcp.lookup");
    }
    if (!names.insert(name).second) {
      problems.Add(where, "a second contract for '" + name + "'; each tool has one");
      continue;
    }
    if (valid) {
      if (auto registered = out.registry.Register(bound.contract); !registered) {
        problems.Add(where, registered.error().message());
      }
    }
    out.tools.push_back(std::move(bound));
  }
  if (!problems.empty()) return problems.ToError(source);
  return out;
}

Result<McpContracts> LoadMcpContractsFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Err(Errc::kInvalidArgument, "cannot read the contracts file '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  Result<json::value> file = ParseStrictJson(text.str());
  if (!file) return file.error().WithContext(path);
  return ParseMcpContracts(file.value(), path);
}

}  // namespace reckon::tools
