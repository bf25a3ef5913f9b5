// SimFleet: the server's side of tool calls in the simulation, and the workers that carry
// them out. It is the engine's ToolDispatcher: an attempt or a lookup becomes a message to one
// simulated worker over the SimNetwork; the worker calls the SimProvider and answers with
// another message. What a real deployment does between `reckon server` and its workers is
// modelled where it matters to the promise:
//   - a worker runs each (operation, attempt) once per process life, however often the
//     request arrives, and refuses an attempt whose hard deadline has passed;
//   - a worker that crashes loses what it held; the server hears of it at once (the
//     connection resets) and answers the engine `unknown` for that worker's attempts;
//   - a paused worker keeps what it holds and runs it when it wakes; the server waits one
//     lease (20 ms) and then answers the engine `unknown` (lease_expired), while the worker
//     may still act before the attempt's deadline: the lookup race the engine must respect.
//     A worker pauses at random, and sometimes just as a request reaches it (a stop-the-world
//     pause in the middle of a call);
//   - a reply that comes after the engine stopped waiting (deadline, lease, a server restart)
//     is handed over as a late report (Engine::ReportLateAttempt), duplicates included;
//   - a lookup the provider does not answer within 50 ms ends still_unknown.
//
// The fleet outlives the server's process lives: AttachServer binds it to one life's
// executor and engine; DetachServer (before that life's engine is destroyed) abandons what
// the engine waits on, as a crash does. Not thread-safe: the simulation's one thread.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "reckon/contract/contract.h"
#include "reckon/engine/clock.h"
#include "reckon/engine/tool_dispatcher.h"
#include "reckon/worker/tool.h"
#include "tests/sim/sim_faults.h"
#include "tests/sim/sim_network.h"
#include "tests/sim/sim_provider.h"
#include "tests/sim/sim_rng.h"
#include "tests/sim/sim_scheduler.h"

namespace reckon {
class Engine;
}

namespace reckon::sim {

inline constexpr std::int64_t kLeaseUs = 20'000;
inline constexpr std::int64_t kLookupTimeoutUs = 50'000;

// The side-effect class of a tool by name (the sim's contracts).
using SideEffectOf = std::function<SideEffect(const std::string& tool)>;

class SimFleet final : public ToolDispatcher {
 public:
  SimFleet(int workers, SimScheduler& agenda, Clock& clock, SimRng& rng, const SimFaults& faults,
           SimCounts& counts, SimNetwork& network, SimProvider& provider,
           SideEffectOf side_effect_of);
  ~SimFleet() override;

  void AttachServer(boost::asio::any_io_executor executor, Engine& engine);
  void DetachServer();

  boost::asio::awaitable<AttemptOutcome> RunAttempt(AttemptRequest request) override;
  boost::asio::awaitable<ReconcileOutcome> Reconcile(ReconcileRequest request) override;

  // Faults the world injects.
  void CrashWorker(int node);
  void PauseWorker(int node, std::int64_t duration_us);
  int workers() const { return static_cast<int>(nodes_.size()); }

  // Attempts and lookups the engine still waits on.
  int waiting() const;
  // The calls the engine still waits on, one line each, for a report.
  std::string DescribeWaiting() const;

  template <class T>
  struct Reply;

 private:
  struct Node {
    int life = 1;
    bool down = false;
    std::int64_t paused_until_us = 0;
    std::uint64_t pause_epoch = 0;
    std::set<std::string> seen;                  // requests run in this life
    std::vector<std::function<void()>> held;     // arrived while paused
  };
  struct Call;

  int PickNode();
  // Registers a call the server hands to `node` (its current life); `id` receives its number.
  Call& NewCall(std::uint64_t& id, int node, const std::string& workflow_id,
                const std::string& operation_id, std::uint32_t number);
  std::int64_t Now() { return clock_.NowMicros(); }
  // At a worker: whether a request that left for `life` may run now (false: dropped or held).
  bool Admit(int node, int life, const std::function<void()>& again);
  void WorkerAttempt(std::uint64_t id, int node, int life, const AttemptRequest& request);
  void WorkerLookup(std::uint64_t id, int node, int life, const ReconcileRequest& request);
  void ServerGotAttempt(std::uint64_t id, const AttemptOutcome& outcome);
  void ServerGotLookup(std::uint64_t id, const ReconcileOutcome& outcome);
  // The server gives up on `node`'s calls of `life` still waited on: unknown for attempts.
  void LoseCalls(int node, int life, const std::string& code);

  SimScheduler& agenda_;
  Clock& clock_;
  SimRng& rng_;
  const SimFaults& faults_;
  SimCounts& counts_;
  SimNetwork& network_;
  SimProvider& provider_;
  SideEffectOf side_effect_of_;
  std::vector<Node> nodes_;
  std::map<std::uint64_t, std::unique_ptr<Call>> calls_;
  std::uint64_t next_call_ = 0;
  int server_life_ = 0;
  Engine* engine_ = nullptr;  // the attached life's; null between lives
  boost::asio::any_io_executor executor_;
};

}  // namespace reckon::sim
