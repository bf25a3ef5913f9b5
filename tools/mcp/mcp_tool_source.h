// McpToolSource: the tools of one MCP server, hosted under the contracts of a contracts file
// (mcp_contracts.h). This is what `reckon worker --mcp` and embedded programs build:
//
//   auto contracts = LoadMcpContractsFile("contracts.json");          // every problem at once
//   auto client = McpClient::Open(executor, {.command = "python3 server.py"});
//   McpToolSource source(std::move(client), std::move(contracts));
//   auto pairing = co_await source.Connect(deadline);                  // tools/list + pairing
//   source.RegisterTools(host.tools());                                // the paired tools
//
// Pairing. Each listed tool is paired with the contract of the same name. A listed tool
// without a contract is refused: not registered, logged, and named in McpPairing::refused (its
// verdict in the report is no_contract). Annotations are hints, checked as
// plan/mcp_catalog.h does, with the binding's operation id argument left out of the catalog's
// inputSchema first (the plan never supplies it). Problems, all reported at once as one
// Errc::kInvalidArgument naming the tool and the field, and nothing registered: a contract whose
// tool the server does not list, a lookup tool it does not list, an operation id argument the
// tool's inputSchema does not declare as a property.
//
// Calls. A registered tool's execute sends tools/call with the input as its arguments, the
// operation id in _meta ("dev.reckon/operation-id") and, if the binding names one, in that
// argument too; the reply becomes an AttemptOutcome (mcp_outcome.h). Its reconcile calls the
// lookup tool the same way and maps the reply to a verdict. Both honour the call's deadline.
//
// Ownership and threads: the source owns the client and the contracts; the functions it
// registers point to it, so it must outlive every registry it registered on (and their use).
// One executor, as McpTransport.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/value.hpp>

#include <memory>
#include <string>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/plan/mcp_catalog.h"
#include "reckon/tools/mcp/mcp_client.h"
#include "reckon/tools/mcp/mcp_contracts.h"
#include "reckon/worker/tool.h"

namespace reckon::tools {

struct McpPairing {
  McpCatalogReport report;            // every listed tool with its verdict
  std::vector<std::string> hosted;    // listed tools with a contract, in catalog order
  std::vector<std::string> refused;   // listed tools without one, in catalog order
  std::vector<std::string> problems;  // "tool 'x': field: what is wrong"; none: it can start

  // Errc::kInvalidArgument listing every problem, or success when there is none.
  Result<void> Check() const;
};

// Pairs a catalog ({"tools": [...]}) with the contracts. Errc::kInvalidArgument only for a
// malformed catalog (plan/mcp_catalog.h); the pairing problems are in McpPairing::problems.
Result<McpPairing> PairMcpTools(const boost::json::value& catalog, const McpContracts& contracts);

class McpToolSource {
 public:
  McpToolSource(std::unique_ptr<McpClient> client, McpContracts contracts);

  // Lists the server's tools (starting it, for stdio) and pairs them; logs refused tools and
  // conflicting hints. Errc::kUnavailable when the server cannot be reached, kInvalidArgument
  // for a malformed catalog or pairing problems (McpPairing::Check).
  boost::asio::awaitable<Result<McpPairing>> Connect(McpClient::Deadline deadline);

  // Registers the hosted tools of the last successful Connect. Errc::kFailedPrecondition
  // before one; otherwise as ToolRegistry::Register.
  Result<void> RegisterTools(ToolRegistry& registry) const;

  McpClient& client() { return *client_; }
  // The last successful Connect's pairing; nullopt before one.
  const std::optional<McpPairing>& pairing() const { return pairing_; }
  const McpContracts& contracts() const { return contracts_; }

 private:
  std::unique_ptr<McpClient> client_;
  McpContracts contracts_;
  std::optional<McpPairing> pairing_;
};

// For composition roots, before their event loop runs (`reckon worker --mcp`, `reckon plan run
// --mcp`): loads the contracts file, opens the client on `io`, runs `io` until the tools are
// listed and paired (at most `timeout`), and registers them on `registry`. The source must
// outlive `registry`'s use; `io` must then be run by the caller (a stdio server's reader runs
// on it). Errors as LoadMcpContractsFile, McpClient::Open, Connect and RegisterTools.
Result<std::unique_ptr<McpToolSource>> OpenMcpTools(
    boost::asio::io_context& io, const McpServerAddress& server, const std::string& contracts_file,
    ToolRegistry& registry, std::chrono::milliseconds timeout = std::chrono::seconds(30));

}  // namespace reckon::tools
