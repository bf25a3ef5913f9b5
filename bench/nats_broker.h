// NatsBroker (benchmarks): a real nats-server with JetStream, started by the benchmark on a
// free port of 127.0.0.1 with its store in a scratch directory, and one stream declared over
// the subjects the benchmark publishes to (the dispatcher never creates streams). The process
// is killed when this object goes. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <sys/types.h>

#include "tests/support/subprocess.h"

namespace reckon::bench {

class NatsBroker {
 public:
  // Starts nats-server (RECKON_NATS_SERVER) with `-js -sd DIR/jetstream` and declares stream
  // `stream` over `subjects` (e.g. "bench.>") with file storage. Exits the program with a
  // message naming the log file if the broker does not come up.
  NatsBroker(const std::string& dir, const std::string& stream, const std::string& subjects);
  ~NatsBroker();
  NatsBroker(const NatsBroker&) = delete;
  NatsBroker& operator=(const NatsBroker&) = delete;

  std::string url() const { return "nats://127.0.0.1:" + std::to_string(port_); }
  pid_t pid() const { return server_->pid(); }
  // Messages the stream holds now (-1 if it cannot say).
  std::int64_t StreamMessages();

 private:
  struct Client;  // the libnats connection (nats_broker.cc)
  int port_ = 0;
  std::string stream_;
  std::optional<testing::Subprocess> server_;
  std::unique_ptr<Client> client_;
};

}  // namespace reckon::bench
