// bench_worker: a worker process for server_bench. Hosts the benchmark workflows "ten_calls"
// (10 sequential calls of the no-op read_only tool "noop") and "ten_calls_publish" (the same,
// then one outbox message), and "ticker" (durable timers, for failover) and connects to a reckon
// server, or to every server of a cluster: --server repeats, one RemoteWorker per server (the
// same registries), each server handing it the tasks of the runs it owns; the slots apply per
// server. A server that goes away is retried by its RemoteWorker; the others keep working.
//
//   bench_worker --server HOST:PORT [--server HOST:PORT ...] [--id NAME] [--tool-slots N]
#include <CLI/CLI.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <string>
#include <vector>

#include "bench/ten_calls.h"
#include "reckon/protocol/tls_flags.h"
#include "reckon/worker/remote_worker.h"

namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace reckon;

using bench::NoopContract;
using bench::Noop;
using bench::TenCalls;

}  // namespace

int main(int argc, char** argv) {
  RemoteWorkerOptions options;
  options.tool_slots = 64;
  options.workflow_slots = 8;
  CLI::App app("bench_worker: hosts ten_calls and noop for server_bench", "bench_worker");
  std::vector<std::string> servers;
  app.add_option("--server", servers, "reckon server HOST:PORT; repeat it for every server of a cluster")
      ->required();
  std::string token_file;
  app.add_option("--token-file", token_file,
                 "file with the worker's API token (default $RECKON_TOKEN_FILE, then "
                 "~/.config/reckon/token)");
  app.add_option("--id", options.worker_id, "worker id");
  app.add_option("--tool-slots", options.tool_slots, "tool calls at once");
  app.add_option("--workflow-slots", options.workflow_slots, "workflow task polls at once");
  api::AddTlsClientFlags(app, options.connection.tls);
  CLI11_PARSE(app, argc, argv);
  api::ApplyTlsEnvironment(options.connection.tls);
  if (auto loaded = LoadWorkerToken(options, token_file); !loaded) {
    std::fprintf(stderr, "bench_worker: %s\n", loaded.error().ToString().c_str());
    return 2;
  }
  spdlog::set_default_logger(spdlog::stderr_color_mt("bench_worker"));
  spdlog::set_level(spdlog::level::warn);
  ToolRegistry tools;
  WorkflowRegistry workflows;
  (void)tools.Register(Tool{NoopContract(), Noop, {}});
  (void)workflows.Register("ten_calls", TenCalls);
  (void)workflows.Register("ten_calls_publish", bench::TenCallsPublish);
  (void)workflows.Register("ticker", bench::Ticker);
  asio::io_context io(1);
  std::vector<std::unique_ptr<RemoteWorker>> workers;
  for (const std::string& server : servers) {
    RemoteWorkerOptions one = options;
    one.server = server;
    workers.push_back(std::make_unique<RemoteWorker>(io.get_executor(), workflows, tools, one));
  }
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (ec) return;
    for (auto& worker : workers) worker->Stop();
  });
  std::size_t running = workers.size();
  // Run() returns when stopped, or when a server refuses the registration: that worker alone
  // ends (it is reported), the others go on.
  auto run = [&](RemoteWorker& worker) -> asio::awaitable<void> {
    auto ended = co_await worker.Run();
    if (!ended) std::fprintf(stderr, "bench_worker: %s\n", ended.error().ToString().c_str());
    if (--running == 0) {
      signals.cancel();
      io.stop();
    }
  };
  for (auto& worker : workers) asio::co_spawn(io, run(*worker), [](std::exception_ptr) {});
  io.run();
  return 0;
}
