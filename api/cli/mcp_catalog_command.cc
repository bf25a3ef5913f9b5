#include "reckon/api/cli/mcp_catalog_command.h"

#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include <filesystem>
#include <optional>

#include "reckon/tools/mcp/mcp_tool_source.h"

namespace reckon::cli {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;

asio::awaitable<void> ListInto(tools::McpClient& client, std::optional<Result<json::value>>* out) {
  *out = co_await client.ListTools(std::chrono::steady_clock::now() + std::chrono::seconds(30));
}

}  // namespace

bool IsMcpCatalogFile(const std::string& value) {
  std::error_code ec;
  return std::filesystem::is_regular_file(value, ec) && ::access(value.c_str(), X_OK) != 0;
}

Result<void> RunLiveMcpCatalog(CommandEnv& env, const tools::McpServerAddress& server,
                               const std::string& contracts_file, bool as_json) {
  if (contracts_file.empty()) {
    return Err(Errc::kInvalidArgument,
               "a live MCP server is checked against a contracts file: add --contracts FILE "
               "(docs/TOOLS.md, section 3)");
  }
  RECKON_TRY(tools::McpContracts contracts, tools::LoadMcpContractsFile(contracts_file));
  asio::io_context io;
  RECKON_TRY(std::unique_ptr<tools::McpClient> client, tools::McpClient::Open(io.get_executor(), server));
  std::optional<Result<json::value>> catalog;
  asio::co_spawn(io, ListInto(*client, &catalog), [&io](std::exception_ptr error) {
    io.stop();
    if (error) std::rethrow_exception(error);
  });
  io.run();
  if (!catalog) return Err(Errc::kInternal, "tools/list did not finish");
  if (!*catalog) return catalog->error();
  RECKON_TRY(tools::McpPairing pairing, tools::PairMcpTools(catalog->value(), contracts));
  std::string out;
  if (as_json) {
    json::value report = McpReportJson(pairing.report);
    json::array refused(pairing.refused.begin(), pairing.refused.end());
    json::array problems(pairing.problems.begin(), pairing.problems.end());
    report.as_object()["server"] = client->name();
    report.as_object()["refused"] = std::move(refused);
    report.as_object()["problems"] = std::move(problems);
    out = json::serialize(report) + "\n";
  } else {
    out = "MCP server " + client->name() + " against the contracts in " + contracts_file + ":\n" +
          RenderMcpReport(pairing.report);
    for (const std::string& name : pairing.refused) {
      out += "refused: " + name + " has no contract: a worker will not host it\n";
    }
    for (const std::string& problem : pairing.problems) out += "problem: " + problem + "\n";
  }
  RECKON_TRY(WriteOut(env, out));
  return pairing.Check();
}

}  // namespace reckon::cli
