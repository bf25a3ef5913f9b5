#include "reckon/protocol/call_once.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <optional>

namespace reckon::api {
namespace asio = boost::asio;

Result<Reply> CallOnce(const std::string& address, ClientOptions options,
                       std::unique_ptr<capnp::MallocMessageBuilder> request,
                       std::chrono::milliseconds timeout) {
  asio::io_context io(1);
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
  if (!out) return Err(Errc::kInternal, "the call to " + address + " did not complete");
  return std::move(*out);
}

}  // namespace reckon::api
