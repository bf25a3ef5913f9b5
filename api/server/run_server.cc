#include "api/server/run_server.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "api/server/service.h"
#include "engine/clock.h"
#include "engine/contract_registry.h"
#include "engine/effect_trace.h"
#include "engine/engine.h"

namespace reckon::api {
namespace asio = boost::asio;

int RunServer(const ServerConfig& config) {
  // Logs go to stderr; stdout stays free for what scripts read.
  if (!spdlog::get("reckon")) spdlog::set_default_logger(spdlog::stderr_color_mt("reckon"));
  auto journal = storage::Journal::Open(config.journal_path, config.journal);
  if (!journal) {
    spdlog::error("cannot open journal '{}': {}", config.journal_path,
                  journal.error().ToString());
    return 1;
  }
  // A second connection for everything but commits: the commit thread owns the first. It is
  // this process's companion of the owner opened above, so it takes no lock of its own.
  storage::JournalOptions reader_options = config.journal;
  reader_options.mode = storage::JournalOptions::Mode::kCompanion;
  auto reader_journal = storage::Journal::Open(config.journal_path, reader_options);
  if (!reader_journal) {
    spdlog::error("cannot open journal '{}': {}", config.journal_path,
                  reader_journal.error().ToString());
    return 1;
  }
  storage::Journal& j = *reader_journal.value();
  ContractRegistry contracts;
  auto loaded = LoadJournaledContracts(j, contracts);
  if (!loaded) {
    spdlog::error("cannot load the contracts journaled in '{}': {}", config.journal_path,
                  loaded.error().ToString());
    return 1;
  }
  auto logger = spdlog::get("trace");
  if (!logger) logger = spdlog::stderr_color_mt("trace");
  logger->set_pattern("%H:%M:%S.%e %v");
  if (config.quiet) logger->set_level(spdlog::level::warn);
  auto trace = EffectTrace::Create(
      logger, config.trace_path.empty() ? config.journal_path + ".trace.jsonl" : config.trace_path);
  if (!trace) {
    spdlog::error("{}", trace.error().ToString());
    return 1;
  }

  asio::io_context io(1);
  asio::thread_pool commit_thread(1);
  Engine* engine_ptr = nullptr;
  auto late = [&engine_ptr](const ToolReport& report) {
    if (engine_ptr == nullptr || !report.attempt_outcome) return;
    engine_ptr->ReportLateAttempt(report.workflow_id, report.operation_id, report.attempt,
                                  *report.attempt_outcome);
  };
  auto durable = [&j](const storage::RunRef& run) { return j.ReadEvents(run); };
  TaskQueues tasks(io.get_executor(), config.tasks, late, durable);
  SystemClock clock;
  EngineOptions engine_options;
  engine_options.decider.worker_name = "server";
  if (!config.inline_commit) {
    engine_options.commit_executor = commit_thread.get_executor();
    engine_options.reader = &j;
  }
  Engine engine(io.get_executor(), *journal.value(), contracts, tasks, tasks, clock,
                trace.value().get(), engine_options);
  engine_ptr = &engine;
  Service service(j, contracts, engine, tasks, config.server.limits.max_message_bytes);
  engine.OnChange([&service](const RunState& run, std::string_view) {
    service.RunChanged(run.ref().workflow_id);
  });
  Server server(io.get_executor(), service, config.server);
  if (auto listening = server.Listen(config.listen); !listening) {
    spdlog::error("{}", listening.error().ToString());
    return 1;
  }

  int exit_code = 0;
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int signal) {
    if (ec) return;
    spdlog::info("signal {}: stopping (the journal holds everything; a restart resumes)",
                 signal);
    server.Stop();
    io.stop();
  });
  auto start = [&]() -> asio::awaitable<void> {
    auto recovered = co_await engine.Recover();
    if (!recovered) {
      spdlog::error("recovery failed: {}", recovered.error().ToString());
      exit_code = 1;
      server.Stop();
      io.stop();
      co_return;
    }
    spdlog::info("reckon server on port {} of {} (journal {}, {} contract(s), {} run(s) resumed)",
                 server.port(), config.listen, config.journal_path, contracts.size(),
                 recovered.value());
    if (config.on_listening) config.on_listening(server.port());
    co_await server.Serve();
  };
  asio::co_spawn(io, start(), asio::detached);
  // The engine stops on a failed commit; then the process must restart to recover.
  asio::steady_timer watchdog(io);
  std::function<void()> watch = [&] {
    watchdog.expires_after(std::chrono::milliseconds(200));
    watchdog.async_wait([&](const boost::system::error_code& ec) {
      if (ec) return;
      if (engine.failed()) {
        spdlog::critical("engine stopped: {}; exiting so that a restart recovers",
                         engine.failure());
        exit_code = 1;
        server.Stop();
        io.stop();
        return;
      }
      watch();
    });
  };
  watch();
  io.run();
  commit_thread.join();  // after the engine's last commit
  return exit_code;
}

}  // namespace reckon::api
