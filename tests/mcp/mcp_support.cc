#include "tests/mcp/mcp_support.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace reckon::testing {
namespace json = boost::json;

std::string Quote(const std::string& word) { return "'" + word + "'"; }

std::string StdioServerCommand(const TempDir& dir, const std::string& faults,
                               const std::vector<std::string>& extra) {
  std::string command = Quote(kPython) + " " + Quote(kMcpServerScript) + " --ledger " +
                        Quote(dir.File("ledger.jsonl")) + " --pid-file " + Quote(dir.File("server.pid"));
  if (!faults.empty()) command += " --faults " + faults;
  for (const std::string& word : extra) command += " " + Quote(word);
  return command;
}

Result<HttpMcpServer> StartHttpServer(const TempDir& dir, const std::string& faults,
                                      std::uint16_t port, bool sse) {
  const std::string port_file = dir.File("http.port");
  std::filesystem::remove(port_file);
  SubprocessOptions options;
  options.args = {kMcpServerScript, "--ledger", dir.File("ledger.jsonl"), "--http",
                  std::to_string(port), "--port-file", port_file};
  if (!faults.empty()) options.args.insert(options.args.end(), {"--faults", faults});
  if (sse) options.args.push_back("--sse");
  options.stderr_path = dir.File("server.log");
  RECKON_TRY(Subprocess process, Subprocess::Start(kPython, std::move(options)));
  for (int i = 0; i < 1000; ++i) {
    std::ifstream in(port_file);
    int bound = 0;
    if (in >> bound && bound > 0) return HttpMcpServer{std::move(process), static_cast<std::uint16_t>(bound)};
    if (!process.running()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return Err(Errc::kUnavailable, "the HTTP MCP server did not start; see " + dir.File("server.log"));
}

std::vector<json::object> LedgerRecords(const TempDir& dir, const std::string& type) {
  std::vector<json::object> out;
  std::ifstream in(dir.File("ledger.jsonl"));
  std::string line;
  while (std::getline(in, line)) {
    boost::system::error_code ec;
    json::value record = json::parse(line, ec);
    if (ec || !record.is_object()) continue;
    const json::value* t = record.as_object().if_contains("type");
    if (t != nullptr && t->is_string() && t->as_string() == type) out.push_back(record.as_object());
  }
  return out;
}

int ServerPid(const TempDir& dir) {
  std::ifstream in(dir.File("server.pid"));
  int pid = -1;
  in >> pid;
  return pid;
}

std::string FastContractsFile(const TempDir& dir) {
  std::ifstream in(std::string(RECKON_SOURCE_DIR) + "/samples/mcp/contracts.json");
  std::stringstream text;
  text << in.rdbuf();
  json::value file = json::parse(text.str());
  for (json::value& entry : file.as_array()) {
    json::object& contract = entry.as_object().at("contract").as_object();
    contract["attempt_timeout_ms"] = 1500;
    contract["retry"].as_object()["backoff"].as_object()["initial_ms"] = 50;
    contract["retry"].as_object()["max_attempts"] = 10;  // the tests' faults hit one step often
    if (contract.contains("reconcile")) {
      json::object& reconcile = contract["reconcile"].as_object();
      reconcile["grace_ms"] = 100;
      reconcile["backoff"].as_object()["initial_ms"] = 100;
      reconcile["max_attempts"] = 20;
    }
  }
  const std::string path = dir.File("contracts.json");
  std::ofstream(path) << json::serialize(file);
  return path;
}

}  // namespace reckon::testing
