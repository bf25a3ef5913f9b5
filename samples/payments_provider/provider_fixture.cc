#include "samples/payments_provider/provider_fixture.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>

#include <charconv>
#include <fstream>
#include <optional>
#include <sstream>

namespace reckon::samples::provider::testing {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

// co_spawn needs a default-constructible result; Result<T> is not, so store it instead.
asio::awaitable<void> SendInto(HttpCall call, std::chrono::milliseconds start_after,
                               std::optional<Result<HttpResponse>>& out) {
  if (start_after.count() > 0) {
    asio::steady_timer timer(co_await asio::this_coro::executor, start_after);
    co_await timer.async_wait(asio::use_awaitable);
  }
  out.emplace(co_await HttpRequest(std::move(call)));
}

}  // namespace

Result<ProviderProcess> ProviderProcess::Start(const std::string& ledger,
                                               const std::string& log_path,
                                               std::vector<std::string> flags) {
  reckon::testing::SubprocessOptions options;
  options.args = {"--port", "0", "--ledger", ledger};
  options.args.insert(options.args.end(), flags.begin(), flags.end());
  options.stderr_path = log_path;
  RECKON_TRY(reckon::testing::Subprocess process,
             reckon::testing::Subprocess::Start(RECKON_PROVIDER_PATH, std::move(options)));
  RECKON_TRY(std::string line, process.ReadLine(10s));
  constexpr std::string_view kPrefix = "listening on 127.0.0.1:";
  std::string_view rest(line);
  unsigned port = 0;
  if (!rest.starts_with(kPrefix) ||
      std::from_chars(rest.data() + kPrefix.size(), rest.data() + rest.size(), port).ec !=
          std::errc() ||
      port == 0 || port > 65535) {
    return Err(Errc::kInternal, "unexpected first line from the provider: '" + line + "'");
  }
  return ProviderProcess(std::move(process), static_cast<std::uint16_t>(port));
}

HttpCall Get(std::uint16_t port, std::string target) {
  HttpCall call;
  call.method = "GET";
  call.port = port;
  call.target = std::move(target);
  call.deadline = std::chrono::steady_clock::now() + 5s;
  return call;
}

HttpCall Post(std::uint16_t port, std::string target, std::string body,
              std::string idempotency_key) {
  HttpCall call = Get(port, std::move(target));
  call.method = "POST";
  call.headers.push_back({"Content-Type", "application/json"});
  if (!idempotency_key.empty()) call.headers.push_back({"Idempotency-Key", idempotency_key});
  call.body = std::move(body);
  return call;
}

Result<HttpResponse> Send(HttpCall call) {
  std::vector<HttpCall> calls;
  calls.push_back(std::move(call));
  return std::move(SendConcurrently(std::move(calls), 0ms).front());
}

std::vector<Result<HttpResponse>> SendConcurrently(std::vector<HttpCall> calls,
                                                   std::chrono::milliseconds stagger) {
  asio::io_context io;
  std::vector<std::optional<Result<HttpResponse>>> slots(calls.size());
  for (std::size_t i = 0; i < calls.size(); ++i) {
    asio::co_spawn(io, SendInto(std::move(calls[i]), stagger * static_cast<int>(i), slots[i]),
                   asio::detached);
  }
  io.run();
  std::vector<Result<HttpResponse>> results;
  for (auto& slot : slots) {
    results.push_back(slot ? std::move(*slot)
                           : Result<HttpResponse>(Err(Errc::kInternal, "call never completed")));
  }
  return results;
}

std::string RefundBody(const std::string& payment_id, std::int64_t amount_cents,
                       const std::string& reason) {
  return boost::json::serialize(boost::json::object{
      {"payment_id", payment_id}, {"amount_cents", amount_cents}, {"reason", reason}});
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

}  // namespace reckon::samples::provider::testing
