#include "reckon/worker/remote_worker_fleet.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/signal_set.hpp>

#include <csignal>
#include <exception>
#include <memory>

namespace reckon {

namespace asio = boost::asio;

int RunRemoteWorkerFleet(asio::io_context& io, const WorkflowRegistry& workflows,
                         const ToolRegistry& tools, const RemoteWorkerOptions& options,
                         const std::vector<std::string>& servers,
                         const std::function<void(const std::string&)>& report) {
  std::vector<std::unique_ptr<RemoteWorker>> workers;
  for (const std::string& server : servers) {
    RemoteWorkerOptions one = options;
    one.server = server;
    workers.push_back(std::make_unique<RemoteWorker>(io.get_executor(), workflows, tools, one));
  }
  asio::signal_set signals(io, SIGINT, SIGTERM);
  auto stop_all = [&workers] {
    for (auto& worker : workers) worker->Stop();
  };
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (!ec) stop_all();
  });
  int exit_code = 0;
  std::size_t running = workers.size();
  auto run = [&](RemoteWorker& worker) -> asio::awaitable<void> {
    auto ended = co_await worker.Run();
    if (!ended) {
      report(ended.error().ToString());
      exit_code = 1;
      stop_all();
    }
    if (--running == 0) {
      signals.cancel();
      io.stop();
    }
  };
  for (auto& worker : workers) {
    asio::co_spawn(io, run(*worker), [&](std::exception_ptr thrown) {
      if (thrown) {
        report("internal error");
        exit_code = 1;
        io.stop();
      }
    });
  }
  io.run();
  return exit_code;
}

}  // namespace reckon
