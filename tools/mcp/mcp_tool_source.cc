#include "reckon/tools/mcp/mcp_tool_source.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <spdlog/spdlog.h>

#include <set>

#include "reckon/contract/field_path.h"
#include "reckon/tools/mcp/mcp_outcome.h"

namespace reckon::tools {
namespace asio = boost::asio;
namespace json = boost::json;

namespace {

const json::object* ListedTool(const json::value& catalog, const std::string& name) {
  const json::value* tools = catalog.is_object() ? catalog.as_object().if_contains("tools") : nullptr;
  if (tools == nullptr || !tools->is_array()) return nullptr;
  for (const json::value& tool : tools->as_array()) {
    const json::object* object = tool.if_object();
    if (object == nullptr) continue;
    const json::value* listed = object->if_contains("name");
    if (listed != nullptr && listed->is_string() && listed->as_string() == name) return object;
  }
  return nullptr;
}

// The catalog with each bound tool's operation id argument taken out of its inputSchema.
json::value WithoutOperationIdArguments(json::value catalog, const McpContracts& contracts) {
  json::value* tools = catalog.is_object() ? catalog.as_object().if_contains("tools") : nullptr;
  if (tools == nullptr || !tools->is_array()) return catalog;
  for (json::value& tool : tools->as_array()) {
    json::object* object = tool.if_object();
    const json::value* name = object != nullptr ? object->if_contains("name") : nullptr;
    if (name == nullptr || !name->is_string()) continue;
    const McpBoundContract* bound = contracts.Find(std::string(name->as_string()));
    if (bound == nullptr || bound->mcp.operation_id_argument.empty()) continue;
    json::value* schema = object->if_contains("inputSchema");
    if (schema == nullptr || !schema->is_object()) continue;
    const std::string& argument = bound->mcp.operation_id_argument;
    if (json::value* properties = schema->as_object().if_contains("properties");
        properties != nullptr && properties->is_object()) {
      properties->as_object().erase(argument);
    }
    if (json::value* required = schema->as_object().if_contains("required");
        required != nullptr && required->is_array()) {
      json::array kept;
      for (const json::value& r : required->as_array()) {
        if (!(r.is_string() && r.as_string() == argument)) kept.push_back(r);
      }
      *required = std::move(kept);
    }
  }
  return catalog;
}

// Whether `schema` (a listed tool's inputSchema) lets `argument` through: declared in its
// properties, or no properties listed at all.
bool DeclaresArgument(const json::object& tool, const std::string& argument) {
  const json::value* schema = tool.if_contains("inputSchema");
  if (schema == nullptr || !schema->is_object()) return false;
  const json::value* properties = schema->as_object().if_contains("properties");
  if (properties == nullptr || !properties->is_object()) return true;
  return properties->as_object().contains(argument);
}

asio::awaitable<AttemptOutcome> Execute(McpClient* client, const McpBoundContract* bound,
                                        json::value input, ToolCallContext context) {
  json::object arguments = input.is_object() ? std::move(input.as_object()) : json::object{};
  if (!bound->mcp.operation_id_argument.empty()) {
    arguments[bound->mcp.operation_id_argument] = context.operation_id;
  }
  McpReply reply = co_await client->CallTool(bound->contract.name, std::move(arguments),
                                             context.operation_id, context.deadline);
  co_return McpAttemptOutcome(bound->contract, bound->mcp, reply);
}

asio::awaitable<ReconcileOutcome> Reconcile(McpClient* client, const McpBoundContract* bound,
                                            json::value input, ToolCallContext context) {
  const McpLookupBinding& lookup = *bound->mcp.lookup;
  json::object arguments = lookup.arguments;
  for (const auto& [argument, path] : lookup.input_arguments) {
    const json::value* value = FindField(input, path);
    if (value == nullptr) {
      ReconcileOutcome unknown;
      unknown.verdict = ReconcileVerdict::kStillUnknown;
      unknown.message = "lookup '" + lookup.tool + "': the input field '" + path +
                        "' is not known (yet); asking again later";
      co_return unknown;
    }
    arguments[argument] = *value;
  }
  if (!lookup.operation_id_argument.empty()) {
    arguments[lookup.operation_id_argument] = context.operation_id;
  }
  McpReply reply = co_await client->CallTool(lookup.tool, std::move(arguments),
                                             context.operation_id, context.deadline);
  co_return McpLookupOutcome(lookup, reply);
}

}  // namespace

Result<void> McpPairing::Check() const {
  if (problems.empty()) return Ok();
  std::string message = std::to_string(problems.size()) +
                        " problem(s) pairing the MCP server's tools with the contracts; "
                        "nothing was started:";
  for (const std::string& p : problems) message += "\n  " + p;
  return Err(Errc::kInvalidArgument, std::move(message));
}

Result<McpPairing> PairMcpTools(const json::value& catalog, const McpContracts& contracts) {
  RECKON_TRY(McpCatalogReport report,
             AnalyzeMcpCatalog(WithoutOperationIdArguments(catalog, contracts), contracts.registry));
  McpPairing pairing;
  std::vector<std::string>& problems = pairing.problems;
  for (const McpBoundContract& bound : contracts.tools) {
    const std::string where = "tool '" + bound.contract.name + "': ";
    const json::object* listed = ListedTool(catalog, bound.contract.name);
    if (listed == nullptr) {
      problems.push_back(where + "the MCP server lists no tool of that name (remove the contract, "
                                 "or point at the right server)");
      continue;
    }
    const std::string& argument = bound.mcp.operation_id_argument;
    if (!argument.empty() && !DeclaresArgument(*listed, argument)) {
      problems.push_back(where + "mcp.operation_id_argument: the tool's inputSchema declares no "
                                 "property '" + argument + "'");
    }
    if (bound.mcp.lookup) {
      const McpLookupBinding& lookup = *bound.mcp.lookup;
      const json::object* lookup_tool = ListedTool(catalog, lookup.tool);
      if (lookup_tool == nullptr) {
        problems.push_back(where + "mcp.lookup.tool: the MCP server lists no tool '" + lookup.tool + "'");
      } else if (!lookup.operation_id_argument.empty() &&
                 !DeclaresArgument(*lookup_tool, lookup.operation_id_argument)) {
        problems.push_back(where + "mcp.lookup.operation_id_argument: the inputSchema of '" +
                           lookup.tool + "' declares no property '" +
                           lookup.operation_id_argument + "'");
      }
    }
  }
  for (const McpToolReport& tool : report.tools) {
    (tool.declared ? pairing.hosted : pairing.refused).push_back(tool.name);
  }
  pairing.report = std::move(report);
  return pairing;
}

McpToolSource::McpToolSource(std::unique_ptr<McpClient> client, McpContracts contracts)
    : client_(std::move(client)), contracts_(std::move(contracts)) {}

asio::awaitable<Result<McpPairing>> McpToolSource::Connect(McpClient::Deadline deadline) {
  Result<json::value> catalog = co_await client_->ListTools(deadline);
  if (!catalog) co_return catalog.error();
  Result<McpPairing> pairing = PairMcpTools(catalog.value(), contracts_);
  if (!pairing) co_return pairing.error().WithContext("MCP server " + client_->name());
  if (Result<void> checked = pairing.value().Check(); !checked) {
    co_return checked.error().WithContext("MCP server " + client_->name());
  }
  for (const std::string& name : pairing.value().refused) {
    spdlog::warn("MCP server {}: tool '{}' has no contract in the contracts file: refused (not "
                 "hosted); give it a contract to use it",
                 client_->name(), name);
  }
  for (const McpToolReport& tool : pairing.value().report.tools) {
    if (tool.verdict == McpVerdict::kConflict) {
      spdlog::warn("MCP server {}: tool '{}': {}", client_->name(), tool.name, tool.reason);
    }
  }
  pairing_ = pairing.value();
  co_return pairing;
}

namespace {

asio::awaitable<void> ConnectInto(McpToolSource* source, McpClient::Deadline deadline,
                                  std::optional<Result<McpPairing>>* out) {
  *out = co_await source->Connect(deadline);
}

}  // namespace

Result<std::unique_ptr<McpToolSource>> OpenMcpTools(asio::io_context& io,
                                                    const McpServerAddress& server,
                                                    const std::string& contracts_file,
                                                    ToolRegistry& registry,
                                                    std::chrono::milliseconds timeout) {
  RECKON_TRY(McpContracts contracts, LoadMcpContractsFile(contracts_file));
  RECKON_TRY(std::unique_ptr<McpClient> client, McpClient::Open(io.get_executor(), server));
  auto source = std::make_unique<McpToolSource>(std::move(client), std::move(contracts));
  std::optional<Result<McpPairing>> pairing;
  asio::co_spawn(io, ConnectInto(source.get(), std::chrono::steady_clock::now() + timeout, &pairing),
                 asio::detached);
  io.restart();
  while (!pairing && io.run_one() > 0) {
  }
  if (!pairing) return Err(Errc::kInternal, "MCP: the event loop stopped before the tools were listed");
  if (!*pairing) return pairing->error();
  RECKON_TRY(source->RegisterTools(registry));
  return source;
}

Result<void> McpToolSource::RegisterTools(ToolRegistry& registry) const {
  if (!pairing_) {
    return Err(Errc::kFailedPrecondition, "McpToolSource: Connect() first: the tools are not paired yet");
  }
  for (const std::string& name : pairing_->hosted) {
    const McpBoundContract* bound = contracts_.Find(name);
    McpClient* client = client_.get();
    Tool tool;
    tool.contract = bound->contract;
    tool.execute = [client, bound](json::value input, ToolCallContext context) {
      return Execute(client, bound, std::move(input), std::move(context));
    };
    if (bound->mcp.lookup) {
      tool.reconcile = [client, bound](json::value input, ToolCallContext context) {
        return Reconcile(client, bound, std::move(input), std::move(context));
      };
    }
    RECKON_TRY(registry.Register(std::move(tool)));
  }
  return Ok();
}

}  // namespace reckon::tools
