#include "reckon/api/server/service.h"

#include <kj/exception.h>

#include "reckon/api/protocol/client.h"

namespace reckon::api {
namespace asio = boost::asio;
using std::chrono::milliseconds;

Service::Service(storage::Journal& journal, ContractRegistry& contracts, Engine& engine,
                 TaskQueues& tasks, std::size_t max_reply_bytes)
    : client_(journal, contracts, engine, tasks),
      worker_(journal, contracts, tasks, max_reply_bytes) {}

asio::awaitable<void> Service::Handle(SessionState& session, wire::Request::Reader request,
                                      milliseconds timeout, wire::Response::Builder response) {
  Result<void> handled = Ok();
  try {
    auto dispatched = Dispatch(session, request, timeout, response);
    handled = co_await std::move(dispatched);
  } catch (const kj::Exception& e) {
    // Cap'n Proto throws when a reader meets a malformed or over-limit message.
    handled = Err(Errc::kInvalidArgument,
                  "malformed request: " + std::string(e.getDescription().cStr()));
  }
  if (!handled) ToWire(handled.error(), response.initResult().initError());
}

asio::awaitable<Result<void>> Service::Dispatch(SessionState& session,
                                                wire::Request::Reader request,
                                                milliseconds timeout,
                                                wire::Response::Builder response) {
  auto method = request.getMethod();
  if (WorkerApi::Handles(method.which())) {
    auto handled = worker_.Handle(session, method, timeout, response);
    co_return co_await std::move(handled);
  }
  auto handled = client_.Handle(method, timeout, response);
  co_return co_await std::move(handled);
}

}  // namespace reckon::api
