// CredentialWatch: a withdrawn credential (api/server/authorizer.h: a token revoked through
// this server or through another one sharing the principal store, or one that expired) ends
// the connections that use it at once. The watch hands the Authorizer's withdrawals to the
// Server (Server::Withdraw: the connection's worker leaves the task queues, so its long polls
// end without a task and a start no longer counts it as connected; then the connection closes
// with the reason). Every `period` it has the Authorizer recheck the credentials of the open
// connections, which notices an expiry within a period, and a revocation made through another
// server within the cache's ttl plus a period.
//
// Ownership: references the Authorizer and the Server, which outlive it; its destructor
// unhooks it from the Authorizer. Threads: the server's executor.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>

#include "reckon/api/server/authorizer.h"
#include "reckon/api/server/server.h"

namespace reckon::api {

class CredentialWatch {
 public:
  CredentialWatch(boost::asio::any_io_executor executor, Authorizer& authorizer, Server& server,
                  std::chrono::milliseconds period = std::chrono::seconds(1));
  ~CredentialWatch();
  CredentialWatch(const CredentialWatch&) = delete;
  CredentialWatch& operator=(const CredentialWatch&) = delete;

  // Starts the periodic recheck (withdrawals through this server are handed over from the
  // construction on). Stop() ends the recheck.
  void Start();
  void Stop() { timer_.cancel(); }

 private:
  void Arm();

  Authorizer& authorizer_;
  Server& server_;
  std::chrono::milliseconds period_;
  boost::asio::steady_timer timer_;
};

}  // namespace reckon::api
