#include "reckon/protocol/socket_deadline.h"

namespace reckon::api {

SocketDeadline::SocketDeadline(boost::asio::any_io_executor executor,
                               std::chrono::milliseconds after, bool close_on_expiry)
    : state_(std::make_shared<State>()), timer_(std::move(executor), after) {
  state_->close = close_on_expiry;
  auto on_expiry = [state = state_](const boost::system::error_code& ec) {
    if (ec || state->socket == nullptr) return;
    state->expired = true;
    boost::system::error_code ignored;
    if (state->close) {
      state->socket->close(ignored);
    } else {
      state->socket->cancel(ignored);
    }
  };
  timer_.async_wait(std::move(on_expiry));
}

SocketDeadline::~SocketDeadline() { Disarm(); }

void SocketDeadline::Watch(boost::asio::ip::tcp::socket& socket) { state_->socket = &socket; }

void SocketDeadline::Disarm() {
  state_->socket = nullptr;
  timer_.cancel();
}

}  // namespace reckon::api
