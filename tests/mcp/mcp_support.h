// Test support for MCP tools: the Python refund MCP server (tests/mcp/refund_mcp_server.py) as
// a stdio command line or as an HTTP server process, its ledger, and a way to run one
// coroutine on an io_context from a test.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reckon/base/error.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace reckon::testing {

inline const std::string kMcpServerScript = std::string(RECKON_SOURCE_DIR) + "/tests/mcp/refund_mcp_server.py";
inline const std::string kPython = RECKON_PYTHON3;

// Quotes a word for SplitCommandLine.
std::string Quote(const std::string& word);

// 'python3 refund_mcp_server.py --ledger L --pid-file P [--faults F] [extra...]'.
std::string StdioServerCommand(const TempDir& dir, const std::string& faults,
                               const std::vector<std::string>& extra = {});

// The server over Streamable HTTP; port 0 picks one. Waits until it listens.
struct HttpMcpServer {
  Subprocess process;
  std::uint16_t port = 0;
  std::string Url() const { return "http://127.0.0.1:" + std::to_string(port) + "/mcp"; }
};
Result<HttpMcpServer> StartHttpServer(const TempDir& dir, const std::string& faults,
                                      std::uint16_t port = 0, bool sse = false);

// The ledger's records of one type ("refund", "call"), in order.
std::vector<boost::json::object> LedgerRecords(const TempDir& dir, const std::string& type);

// The pid the stdio server wrote at start, or -1.
int ServerPid(const TempDir& dir);

// A contracts file like samples/mcp/contracts.json with short timeouts for tests (attempt
// 1500 ms, grace 100 ms, lookups 100 ms apart, 10 attempts), written into `dir`; returns its path.
std::string FastContractsFile(const TempDir& dir);

template <class T>
boost::asio::awaitable<void> StoreResult(boost::asio::awaitable<T> task, std::optional<T>* out) {
  *out = co_await std::move(task);
}

// Runs `task` on `io` until it completes (other coroutines on `io` run meanwhile).
template <class T>
T RunTask(boost::asio::io_context& io, boost::asio::awaitable<T> task) {
  std::optional<T> out;
  boost::asio::co_spawn(io, StoreResult(std::move(task), &out), boost::asio::detached);
  io.restart();
  while (!out) io.run_one();
  return std::move(*out);
}

}  // namespace reckon::testing
