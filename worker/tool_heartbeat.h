// ToolHeartbeat: what a running tool's own heartbeats leave for its worker. Tool code calls
// ToolCallContext::Heartbeat(details) while it works; the worker relays the latest details to
// the server on its next heartbeat (RemoteWorker) or keeps them with the attempt (LocalWorker),
// and they go with the report that ends the attempt. The server journals them when the attempt
// fails or is lost, and hands them to the next attempt (ToolCallContext::LastHeartbeatDetails).
//
// A contract's heartbeat_timeout counts only these beats, not the worker's automatic renewal
// of the tasks it holds: a tool declaring one must heartbeat itself, more often than the
// timeout (and than the server's heartbeat interval, default 1 s, at which beats are relayed).
//
// One per attempt, shared by the tool's context and the worker; used on the worker's one
// executor, not thread-safe.
#pragma once

#include <boost/json/value.hpp>

#include <chrono>
#include <cstdint>
#include <string>

namespace reckon {

class ToolHeartbeat {
 public:
  // Records one beat. Details that are not JSON-serializable within kMaxHeartbeatDetailsBytes
  // are dropped (the beat still counts); null keeps the previous details.
  void Beat(const boost::json::value& details);
  // Whether the tool beat since the last TakeBeat, and then the latest details.
  bool pending() const { return beats_ != relayed_; }
  const std::string& TakeBeat() {
    relayed_ = beats_;
    return details_json_;
  }
  const std::string& details_json() const { return details_json_; }
  std::uint64_t beats() const { return beats_; }
  std::chrono::steady_clock::time_point last_beat() const { return last_beat_; }

 private:
  std::string details_json_;
  std::uint64_t beats_ = 0;
  std::uint64_t relayed_ = 0;
  std::chrono::steady_clock::time_point last_beat_ = std::chrono::steady_clock::now();
};

}  // namespace reckon
