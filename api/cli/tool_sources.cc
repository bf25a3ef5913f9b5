#include "reckon/api/cli/tool_sources.h"

#include <map>
#include <memory>
#include <optional>

#include "reckon/tools/http/http_tool.h"
#include "reckon/tools/http/http_tools_file.h"

namespace reckon::cli {

void AddToolSourceFlags(CLI::App* command, ToolSourceFlags& flags) {
  command->add_option("--tools", flags.tools_files,
                      "tools file (JSON, docs/TOOLS.md): HTTP tools under contracts; repeat it "
                      "for several files")
      ->allow_extra_args(false);  // one file per --tools, so that a plan file after it stays positional
  auto* mcp = command->add_option("--mcp", flags.mcp_command,
                                  "host the tools of an MCP server spawned as 'COMMAND ARGS' "
                                  "(stdio), under the contracts of --contracts FILE "
                                  "(docs/TOOLS.md, section 3)");
  auto* url = command->add_option("--mcp-url", flags.mcp_url,
                                  "host the tools of a Streamable HTTP MCP server "
                                  "(http://HOST:PORT/PATH), under --contracts FILE");
  mcp->excludes(url);
  command->add_option("--contracts", flags.mcp_contracts,
                      "with --mcp or --mcp-url: the MCP server's tool contracts and bindings")
      ->type_name("FILE");
}

Result<void> LoadToolSources(const ToolSourceFlags& flags, ToolRegistry& registry,
                             const tools::EnvLookup& env) {
  std::vector<std::shared_ptr<const tools::HttpToolsFile>> files;
  std::string problems;
  for (const std::string& path : flags.tools_files) {
    auto file = tools::LoadHttpToolsFile(path, env);
    if (!file) {
      problems += (problems.empty() ? "" : "\n") + file.error().message();
      continue;
    }
    files.push_back(std::move(file).value());
  }
  std::optional<tools::McpContracts> mcp;
  if (flags.HasMcp() && flags.mcp_contracts.empty()) {
    problems += (problems.empty() ? "" : "\n") +
                std::string("--mcp and --mcp-url need --contracts FILE: the contracts of the MCP "
                            "server's tools (docs/TOOLS.md, section 3)");
  } else if (!flags.HasMcp() && !flags.mcp_contracts.empty()) {
    problems += (problems.empty() ? "" : "\n") +
                std::string("--contracts names the contracts of an MCP server's tools: add --mcp "
                            "'COMMAND ARGS' or --mcp-url URL");
  } else if (flags.HasMcp()) {
    auto loaded = tools::LoadMcpContractsFile(flags.mcp_contracts);
    if (loaded) {
      mcp = std::move(loaded).value();
    } else {
      problems += (problems.empty() ? "" : "\n") + loaded.error().message();
    }
  }
  if (!problems.empty()) return Err(Errc::kInvalidArgument, std::move(problems));
  // Checked against each other before anything is registered.
  std::map<std::string, std::string> owner;  // tool name -> file
  if (mcp) {
    for (const tools::McpBoundContract& bound : mcp->tools) {
      owner.emplace(bound.contract.name, flags.mcp_contracts);
    }
  }
  for (const auto& file : files) {
    for (const tools::HttpToolSpec& spec : file->tools) {
      auto [at, fresh] = owner.emplace(spec.contract.name, file->source);
      if (!fresh) {
        problems += (problems.empty() ? "" : "\n") + std::string("tool '") + spec.contract.name +
                    "' is declared in both " + at->second + " and " + file->source +
                    "; keep one";
      }
    }
  }
  if (!problems.empty()) return Err(Errc::kInvalidArgument, std::move(problems));
  for (const auto& file : files) {
    RECKON_TRY(tools::RegisterHttpTools(registry, file));
  }
  return Ok();
}

Result<std::unique_ptr<tools::McpToolSource>> ConnectMcpToolSource(const ToolSourceFlags& flags,
                                                                   boost::asio::io_context& io,
                                                                   ToolRegistry& registry) {
  if (!flags.HasMcp()) return std::unique_ptr<tools::McpToolSource>();
  tools::McpServerAddress server{flags.mcp_command, flags.mcp_url};
  return tools::OpenMcpTools(io, server, flags.mcp_contracts, registry);
}

}  // namespace reckon::cli
