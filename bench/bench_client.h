// BenchClient: the benchmarks' client of a reckon server, or of every server of a cluster
// (docs/DEPLOYMENT.md, "Several nodes on PostgreSQL"). It keeps one connection per server. RunOne
// sends a start to the servers in turn (round robin), follows a not_owner redirect to the owner
// (one more round trip), then watches the run at the owner until it ends. A server it has not met
// (named by a redirect) is connected on first use.
//
// Patient mode (failover benchmarks): a lost connection or an unavailable reply (a shard with
// no owner while a failover is under way) is retried every 50 ms at the next server for up to
// 30 s, and a start repeated after a lost reply that finds the run already started counts as
// started. Otherwise any error ends RunOne with false (printed), except the refusal a start
// gets before the workers have registered, retried for 2 s.
//
// Ownership: held by its benchmark, which keeps it alive until the io_context has stopped;
// coroutines refer to it. Threads: one single-threaded io_context.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <capnp/message.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "reckon/protocol/client.h"
#include "reckon/base/error.h"

namespace reckon::bench {

struct BenchClientOptions {
  std::vector<std::string> servers;  // HOST:PORT of each server; at least one
  std::string token;                 // the operator's: start and watch
  api::TlsClientConfig tls;
  bool patient = false;
};

class BenchClient {
 public:
  // Connects to every server. kUnavailable naming the first that does not answer.
  static boost::asio::awaitable<Result<std::unique_ptr<BenchClient>>> Connect(
      boost::asio::any_io_executor executor, BenchClientOptions options);

  // Starts workflow `id` of `type` with `input_json` and follows it to its end. Returns the
  // address of the server that served the watch (the owner) when it completed; an empty
  // string when it failed, was cancelled, or a request failed (the reason is printed).
  boost::asio::awaitable<std::string> RunOne(std::string id, std::string type,
                                             std::string input_json);

  void Close();
  // Closes every connection and ends every RunOne in progress (returning "", silently).
  void Stop();
  // Starts that were answered with a redirect, so far.
  std::int64_t redirected_starts() const { return redirected_starts_; }
  std::int64_t retries() const { return retries_; }

 private:
  BenchClient(boost::asio::any_io_executor executor, BenchClientOptions options);
  // The connection to `address`, connecting when there is none or it was lost.
  boost::asio::awaitable<Result<std::shared_ptr<api::Client>>> To(std::string address);
  // Sends `request` once to `address`.
  boost::asio::awaitable<Result<api::Reply>> CallAt(
      std::string address, std::unique_ptr<capnp::MallocMessageBuilder> request);
  // Sends a copy of `request` to `address`, following redirects and, when patient, retrying
  // at the next server. On success, `address` names the server that answered.
  boost::asio::awaitable<Result<api::Reply>> Call(capnp::MallocMessageBuilder& request,
                                                  std::string& address, bool is_start);
  std::string NextServer();

  boost::asio::any_io_executor executor_;
  BenchClientOptions options_;
  std::map<std::string, std::shared_ptr<api::Client>> connections_;
  std::size_t next_ = 0;
  std::int64_t redirected_starts_ = 0;
  std::int64_t retries_ = 0;
  bool stopped_ = false;
};

}  // namespace reckon::bench
