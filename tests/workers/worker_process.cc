#include "tests/workers/worker_process.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <cstdio>
#include <string>

namespace reckon::testing {

namespace asio = boost::asio;

int RunWorkerProcess(std::string_view program, const WorkflowRegistry& workflows,
                     const ToolRegistry& tools, RemoteWorkerOptions options) {
  const std::string name(program);
  asio::io_context io(1);
  RemoteWorker worker(io.get_executor(), workflows, tools, std::move(options));
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (!ec) worker.Stop();
  });
  int exit_code = 0;
  auto run = [&]() -> asio::awaitable<void> {
    auto ended = co_await worker.Run();
    if (!ended) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), ended.error().ToString().c_str());
      exit_code = 1;
    }
    signals.cancel();
    io.stop();
  };
  asio::co_spawn(io, run(), [&](std::exception_ptr thrown) {
    if (thrown) {
      std::fprintf(stderr, "%s: internal error\n", name.c_str());
      exit_code = 1;
      io.stop();
    }
  });
  io.run();
  return exit_code;
}

}  // namespace reckon::testing
