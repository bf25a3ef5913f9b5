// payments-provider: a fake payment provider that remembers refunds across crashes, with
// seeded failure injection. The API is described in router.h, its behaviour in
// refund_service.h, the ledger in ledger.h.
//
// On start it prints exactly one line, "listening on 127.0.0.1:PORT", to stdout (tests read
// it); logs go to stderr. SIGTERM or SIGINT stops it with exit code 0; requests still in
// flight are abandoned, which is safe because each refund is committed atomically or not at
// all. Exit code 1: the ledger cannot be opened or the port bound; bad flags: CLI11's codes
// (100 and up), with a message on stderr.
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <spdlog/logger.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <exception>
#include <iostream>
#include <memory>
#include <string>

#include "samples/payments_provider/ledger.h"
#include "samples/payments_provider/refund_service.h"
#include "samples/payments_provider/router.h"
#include "samples/payments_provider/server.h"

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using reckon::samples::provider::Ledger;
using reckon::samples::provider::ProviderConfig;
using reckon::samples::provider::RefundService;
using reckon::samples::provider::Router;

struct Flags {
  std::uint16_t port = 0;
  std::string ledger;
  std::uint64_t seed = 1;
  double drop_reply_rate = 0;
  double fail_before_commit_rate = 0;
  int delay_ms = 0;
  bool no_dedup = false;
  int rate_limit_first = 0;
  bool refund_id_from_card = false;
};

int Run(const Flags& flags, spdlog::logger& log) {
  reckon::Result<Ledger> ledger = Ledger::Open(flags.ledger);
  if (!ledger) {
    log.error("cannot open the ledger: {}", ledger.error().ToString());
    return 1;
  }
  ProviderConfig config;
  config.seed = flags.seed;
  config.faults.drop_reply = flags.drop_reply_rate;
  config.faults.fail_before_commit = flags.fail_before_commit_rate;
  config.delay = std::chrono::milliseconds(flags.delay_ms);
  config.dedup = !flags.no_dedup;
  config.rate_limit_first = flags.rate_limit_first;
  config.refund_id_from_card = flags.refund_id_from_card;
  RefundService service(ledger.value(), config, [] { return std::chrono::system_clock::now(); });
  Router router(service);

  // Declared after everything the coroutines refer to, so it (and they) are destroyed first.
  asio::io_context io;
  tcp::acceptor acceptor(io);
  boost::system::error_code ec;
  tcp::endpoint endpoint(asio::ip::address_v4::loopback(), flags.port);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    log.error("cannot listen on 127.0.0.1:{}: {}", flags.port, ec.message());
    return 1;
  }
  // Handlers are installed before the line is printed: a test may signal as soon as it reads it.
  asio::signal_set signals(io, SIGTERM, SIGINT);
  auto on_signal = [&log, &acceptor, &io](const boost::system::error_code& error, int sig) {
    if (error) return;
    log.info("signal {}: stopping", sig);
    boost::system::error_code ignored;
    acceptor.close(ignored);
    io.stop();
  };
  signals.async_wait(std::move(on_signal));

  std::uint16_t port = acceptor.local_endpoint().port();
  std::cout << "listening on 127.0.0.1:" << port << std::endl;
  log.info("listening on 127.0.0.1:{} ledger={} seed={} drop_reply_rate={} "
           "fail_before_commit_rate={} delay_ms={} dedup={}",
           port, flags.ledger, flags.seed, flags.drop_reply_rate,
           flags.fail_before_commit_rate, flags.delay_ms, !flags.no_dedup);

  reckon::samples::provider::StartServing(io, acceptor, router, log);
  io.run();
  log.info("stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"payments-provider: a fake payment provider with a durable refund ledger"};
  Flags flags;
  app.add_option("--port", flags.port, "TCP port on 127.0.0.1 (0: pick a free one)");
  app.add_option("--ledger", flags.ledger, "SQLite file holding the refunds")->required();
  app.add_option("--seed", flags.seed, "seed for payments and injected failures");
  app.add_option("--drop-reply-rate", flags.drop_reply_rate,
                 "share of new refunds committed whose reply is never sent")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--fail-before-commit-rate", flags.fail_before_commit_rate,
                 "share of new refunds refused with 503 before anything is committed")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--delay-ms", flags.delay_ms, "wait before committing a new refund")
      ->check(CLI::Range(0, 600000));
  app.add_option("--rate-limit-first", flags.rate_limit_first,
                 "refuse the first N new refunds with 429 rate_limited (nothing committed)")
      ->check(CLI::Range(0, 1000000));
  app.add_flag("--refund-id-from-card", flags.refund_id_from_card,
               "build refund ids from the request's card token (re_<token>_<seq>), as a "
               "careless provider might");
  app.add_flag("--no-dedup", flags.no_dedup,
               "ignore Idempotency-Key for deduplication (still stored for lookups)");
  CLI11_PARSE(app, argc, argv);

  auto log = std::make_shared<spdlog::logger>(
      "payments-provider", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  try {
    return Run(flags, *log);
  } catch (const std::exception& e) {
    log->error("fatal: {}", e.what());
    return 1;
  }
}
