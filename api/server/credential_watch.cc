#include "reckon/api/server/credential_watch.h"

namespace reckon::api {

CredentialWatch::CredentialWatch(boost::asio::any_io_executor executor, Authorizer& authorizer,
                                 Server& server, std::chrono::milliseconds period)
    : authorizer_(authorizer), server_(server), period_(period), timer_(executor) {
  authorizer_.OnWithdrawn([this](const Withdrawal& withdrawal) { server_.Withdraw(withdrawal); });
}

CredentialWatch::~CredentialWatch() { authorizer_.OnWithdrawn(nullptr); }

void CredentialWatch::Start() { Arm(); }

void CredentialWatch::Arm() {
  timer_.expires_after(period_);
  // Destroying the timer cancels the wait: the handler then touches nothing of this.
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    authorizer_.Recheck(server_.OpenCredentials());
    Arm();
  });
}

}  // namespace reckon::api
