#include "bench/bench_client.h"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdio>

namespace reckon::bench {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

BenchClient::BenchClient(asio::any_io_executor executor, BenchClientOptions options)
    : executor_(std::move(executor)), options_(std::move(options)) {}

asio::awaitable<Result<std::unique_ptr<BenchClient>>> BenchClient::Connect(
    asio::any_io_executor executor, BenchClientOptions options) {
  std::unique_ptr<BenchClient> client(new BenchClient(executor, std::move(options)));
  for (const std::string& server : client->options_.servers) {
    auto connected = co_await client->To(server);
    if (!connected) co_return connected.error();
  }
  co_return std::move(client);
}

asio::awaitable<Result<std::shared_ptr<api::Client>>> BenchClient::To(std::string address) {
  auto found = connections_.find(address);
  if (found != connections_.end() && found->second->connected()) co_return found->second;
  api::ClientOptions options;
  options.token = options_.token;
  options.tls = options_.tls;
  options.connect_timeout = 2s;
  auto connecting = api::Client::Connect(executor_, address, std::move(options));
  auto client = co_await std::move(connecting);
  if (!client) co_return client.error();
  // Another coroutine may have connected meanwhile: keep one connection per server.
  found = connections_.find(address);
  if (found != connections_.end() && found->second->connected()) {
    client.value()->Close();
    co_return found->second;
  }
  connections_[address] = client.value();
  co_return client.value();
}

asio::awaitable<Result<api::Reply>> BenchClient::CallAt(
    std::string address, std::unique_ptr<capnp::MallocMessageBuilder> request) {
  auto client = co_await To(std::move(address));
  if (!client) co_return client.error();
  auto call = client.value()->Call(std::move(request), 15s);
  co_return co_await std::move(call);
}

std::string BenchClient::NextServer() {
  return options_.servers[next_++ % options_.servers.size()];
}

asio::awaitable<Result<api::Reply>> BenchClient::Call(capnp::MallocMessageBuilder& request,
                                                      std::string& address, bool is_start) {
  const auto give_up = SteadyClock::now() + (options_.patient ? 30s : 2s);
  int hops = 0;
  while (true) {
    if (stopped_) co_return Err(Errc::kUnavailable, "the benchmark stopped its client");
    auto copy = std::make_unique<capnp::MallocMessageBuilder>();
    copy->setRoot(request.getRoot<api::wire::Request>().asReader());
    Result<api::Reply> reply = co_await CallAt(address, std::move(copy));
    if (reply) co_return reply;
    const Error& error = reply.error();
    if (error.code() == Errc::kNotOwner && !error.redirect().empty() && ++hops < 8) {
      if (is_start && hops == 1) ++redirected_starts_;
      address = error.redirect();
      continue;
    }
    // Before the workers have registered, a start is refused as a failed precondition.
    bool again = is_start && error.code() == Errc::kFailedPrecondition;
    if (options_.patient &&
        (error.code() == Errc::kUnavailable || error.code() == Errc::kDeadlineExceeded)) {
      again = true;
      address = NextServer();
      hops = 0;
    }
    if (!again || SteadyClock::now() >= give_up) co_return reply;
    ++retries_;
    asio::steady_timer wait(executor_, again && options_.patient ? 50ms : 10ms);
    co_await wait.async_wait(asio::use_awaitable);
  }
}

asio::awaitable<std::string> BenchClient::RunOne(std::string id, std::string type,
                                                 std::string input_json) {
  capnp::MallocMessageBuilder start;
  auto s = start.initRoot<api::wire::Request>().initMethod().initStartWorkflow();
  s.setWorkflowId(id);
  s.setWorkflowType(type);
  s.setInputJson(input_json);
  std::string owner = NextServer();
  auto started = co_await Call(start, owner, /*is_start=*/true);
  if (!started) {
    if (stopped_) co_return "";
    std::fprintf(stderr, "start %s: %s\n", id.c_str(), started.error().ToString().c_str());
    co_return "";
  }
  std::int64_t seen = 0;
  while (true) {
    capnp::MallocMessageBuilder watch;
    auto w = watch.initRoot<api::wire::Request>().initMethod().initWatchWorkflow();
    w.setWorkflowId(id);
    w.setAfterSeq(seen);
    w.setWaitMs(10000);
    auto reply = co_await Call(watch, owner, /*is_start=*/false);
    if (!reply) {
      if (stopped_) co_return "";
      std::fprintf(stderr, "watch %s: %s\n", id.c_str(), reply.error().ToString().c_str());
      co_return "";
    }
    for (auto event : reply.value().get().getResult().getHistory()) {
      seen = event.getSeq();
      const std::string kind = event.getType().cStr();
      if (kind == "WorkflowCompleted") co_return owner;
      if (kind == "WorkflowFailed" || kind == "WorkflowCancelled") {
        std::fprintf(stderr, "%s ended %s\n", id.c_str(), kind.c_str());
        co_return "";
      }
    }
  }
}

void BenchClient::Close() {
  for (auto& [address, client] : connections_) client->Close();
}

void BenchClient::Stop() {
  stopped_ = true;
  Close();
}

}  // namespace reckon::bench
