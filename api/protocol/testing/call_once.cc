#include "reckon/api/protocol/testing/call_once.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <optional>

#include "reckon/api/protocol/credentials.h"

namespace reckon::testing {
namespace asio = boost::asio;
using api::Client;
using api::ReadTokenFile;

Result<Reply> CallOnce(const std::string& address, ClientOptions options,
                       std::unique_ptr<capnp::MallocMessageBuilder> request,
                       std::chrono::milliseconds timeout) {
  asio::io_context io;
  std::optional<Result<Reply>> out;
  auto run = [&]() -> asio::awaitable<void> {
    auto connect = Client::Connect(io.get_executor(), address, std::move(options));
    auto client = co_await std::move(connect);
    if (!client) {
      out.emplace(client.error());
      co_return;
    }
    auto call = client.value()->Call(std::move(request), timeout);
    out.emplace(co_await std::move(call));
    client.value()->Close();
  };
  asio::co_spawn(io, run(), asio::detached);
  io.run();
  if (!out) return Err(Errc::kInternal, "the call did not complete");
  return std::move(*out);
}

Result<Reply> CallOnceWithTokenFile(const std::string& address, const std::string& token_file,
                                    std::unique_ptr<capnp::MallocMessageBuilder> request) {
  ClientOptions options;
  RECKON_TRY(options.token, ReadTokenFile(token_file));
  return CallOnce(address, std::move(options), std::move(request));
}

}  // namespace reckon::testing
