// `reckon contracts --mcp 'COMMAND ARGS' | --mcp-url URL --contracts FILE`: connects to a live
// MCP server (tools/mcp/mcp_client.h), lists its tools and sets them against the contracts file
// (tools/mcp/mcp_contracts.h), as a worker hosting them would: each tool's verdict (its
// annotations as hints, plan/mcp_catalog.h), the tools refused for want of a contract, and
// every pairing problem. `reckon contracts --mcp FILE` (a saved tools/list result) stays in
// server_commands.cc.
#pragma once

#include <string>

#include "reckon/api/cli/command.h"
#include "reckon/base/error.h"
#include "reckon/tools/mcp/mcp_client.h"

namespace reckon::cli {

// Writes the report (JSON with `json`). Errors: the contracts file (every problem), a server
// that cannot be reached, and, after the report is written, pairing problems
// (Errc::kInvalidArgument: a worker would refuse to start).
Result<void> RunLiveMcpCatalog(CommandEnv& env, const tools::McpServerAddress& server,
                               const std::string& contracts_file, bool json);

// Whether `--mcp VALUE` names a saved tools/list result rather than a command to spawn: a
// file that exists and is not executable.
bool IsMcpCatalogFile(const std::string& value);

}  // namespace reckon::cli
