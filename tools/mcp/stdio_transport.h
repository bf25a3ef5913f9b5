// StdioTransport: an MCP server run as a child process, spoken to over its stdin and stdout
// with newline-delimited JSON-RPC 2.0 (MCP's stdio transport). Its stderr is this process's.
//
// Process life. The first request starts the server (posix_spawnp of the command's argv, PATH
// searched) and runs the handshake (initialize, notifications/initialized). When the server
// ends (its stdout closes), writes a line that is not JSON-RPC, or cannot be written to, that
// life is over: it is SIGKILLed and reaped, every request in flight on it gets its answer
// (kNotSent if its line was never handed to the server, kUnknown if it was), and the next
// request starts a new process. A request whose line could not be written because the server
// was already gone is sent once more, on the new process.
//
// The child's stdin and stdout are socket pairs rather than pipes: writes then carry
// MSG_NOSIGNAL, so a server that died gives EPIPE instead of killing this process with SIGPIPE,
// without changing the process-wide SIGPIPE disposition. Everything else runs on the executor:
// one reader coroutine and one writer coroutine per process life, no thread.
//
// Deadlines and cancellation: a request waits for its answer until its deadline or a terminal
// cancellation; then, if its line was handed to the server, it sends notifications/cancelled
// and reports kUnknown ("deadline" or "cancelled"); a late answer is dropped. The process is
// not killed: other requests may be running on it.
//
// Destruction closes the server's stdin, sends SIGTERM, waits up to a second, then SIGKILLs
// it. Call no method once destruction has begun; destroy it only with no request in flight.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/tools/mcp/mcp_transport.h"

namespace reckon::tools {

// 'python3 server.py --ledger "my file"' -> {"python3", "server.py", "--ledger", "my file"}:
// words split on blanks; single and double quotes group, a backslash escapes the next
// character outside single quotes. No shell: no variables, globs or redirections.
// Errc::kInvalidArgument for an empty command or an unterminated quote.
Result<std::vector<std::string>> SplitCommandLine(std::string_view command_line);

class StdioTransport final : public McpTransport {
 public:
  // Does not start the server: the first request does. `argv` must not be empty.
  StdioTransport(boost::asio::any_io_executor executor, std::vector<std::string> argv);
  ~StdioTransport() override;

  StdioTransport(const StdioTransport&) = delete;
  StdioTransport& operator=(const StdioTransport&) = delete;

  boost::asio::awaitable<McpReply> Request(std::string method, boost::json::object params,
                                           Deadline deadline) override;
  const std::string& name() const override { return name_; }

  // How many server processes were started so far (each restart counts).
  int starts() const { return starts_; }

  struct Life;  // one process life, shared with its reader and writer coroutines

 private:
  // The running, initialized life, starting one if none; kNotSent reply when it cannot.
  boost::asio::awaitable<McpReply> Ready(Deadline deadline, std::shared_ptr<Life>& out);
  boost::asio::awaitable<McpReply> Start(Deadline deadline);

  boost::asio::any_io_executor executor_;
  std::vector<std::string> argv_;
  std::string name_;
  std::shared_ptr<Life> life_;  // null before the first start
  bool starting_ = false;
  // Requests waiting for a start in progress; each is woken when it ends.
  std::vector<boost::asio::steady_timer*> waiters_;
  int starts_ = 0;
};

}  // namespace reckon::tools
