// Where a command that hosts tools (`reckon worker`, embedded `reckon plan run`) gets them:
// the tool sources named by its flags:
//
//   --tools FILE   HTTP tools declared in a tools file (tools/http/http_tools_file.h;
//                  docs/TOOLS.md), repeatable
//   --mcp 'COMMAND ARGS' | --mcp-url URL, with --contracts FILE
//                  the tools of one MCP server (stdio or Streamable HTTP) under the contracts
//                  and MCP bindings of FILE (tools/mcp/mcp_contracts.h; docs/TOOLS.md, section 3)
//
// LoadToolSources checks every source before it registers anything: all the problems of all
// the files (the MCP contracts file included) come back in one kInvalidArgument error (exit
// 2), and a bad source leaves the registry empty, so a command stops before it connects or
// journals anything. The MCP server is then connected by ConnectMcpToolSource, on the event
// loop the command runs: its tools are listed, paired with their contracts (pairing problems:
// kInvalidArgument, nothing registered) and registered.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "reckon/base/error.h"
#include <boost/asio/io_context.hpp>

#include <memory>

#include "reckon/tools/http/http_template.h"
#include "reckon/tools/mcp/mcp_tool_source.h"
#include "reckon/worker/tool.h"

namespace reckon::cli {

struct ToolSourceFlags {
  std::vector<std::string> tools_files;  // --tools
  std::string mcp_command;               // --mcp
  std::string mcp_url;                   // --mcp-url
  std::string mcp_contracts;             // --contracts (with --mcp or --mcp-url)

  bool HasMcp() const { return !mcp_command.empty() || !mcp_url.empty(); }
  bool Empty() const { return tools_files.empty() && !HasMcp(); }
};

// Adds the flags of every tool source to `command`; `flags` must outlive it.
void AddToolSourceFlags(CLI::App* command, ToolSourceFlags& flags);

// Loads every source and registers its tools in `registry` (see above). Environment variables
// that tools files refer to come from `env`.
Result<void> LoadToolSources(const ToolSourceFlags& flags, ToolRegistry& registry,
                             const tools::EnvLookup& env);

// With --mcp or --mcp-url: connects to the MCP server on `io` (running it until the tools are
// listed, at most 30 s) and registers its paired tools in `registry`; the source must outlive
// the registry's use and be destroyed before `io`. Without them: null. Errors name the server.
Result<std::unique_ptr<tools::McpToolSource>> ConnectMcpToolSource(const ToolSourceFlags& flags,
                                                                   boost::asio::io_context& io,
                                                                   ToolRegistry& registry);

}  // namespace reckon::cli
