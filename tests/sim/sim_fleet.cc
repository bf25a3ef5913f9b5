#include "tests/sim/sim_fleet.h"

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <optional>
#include <utility>

#include "reckon/engine/engine.h"

namespace reckon::sim {

namespace asio = boost::asio;

// What the engine awaits for one call: answered once, by the worker's reply, a lost lease, a
// timeout or the engine's own cancellation; later answers are no-ops.
template <class T>
struct SimFleet::Reply {
  std::optional<asio::any_completion_handler<void(T)>> handler;
  asio::any_io_executor executor;
  bool answered = false;

  void Answer(T value) {
    if (answered) return;
    answered = true;
    if (!handler) return;
    auto complete = std::move(*handler);
    handler.reset();
    auto resume = [complete = std::move(complete), value = std::move(value)]() mutable {
      std::move(complete)(std::move(value));
    };
    asio::post(executor, std::move(resume));
  }
  // A crash: the waiting coroutine dies with its process (before the engine does).
  void Abandon() {
    answered = true;
    handler.reset();
  }
};

struct SimFleet::Call {
  bool lookup = false;
  int server_life = 0;
  int node = 0;
  int node_life = 0;
  std::string workflow_id;
  std::string operation_id;
  std::uint32_t number = 0;  // attempt, or lookup round
  std::shared_ptr<Reply<AttemptOutcome>> attempt;
  std::shared_ptr<Reply<ReconcileOutcome>> reconcile;
  bool waited_on() const {
    return (attempt && !attempt->answered) || (reconcile && !reconcile->answered);
  }
};

namespace {

template <class T>
asio::awaitable<T> Await(std::shared_ptr<SimFleet::Reply<T>> reply, T if_cancelled) {
  auto initiation = [reply, if_cancelled](auto handler) mutable {
    reply->handler.emplace(std::move(handler));
    // The engine cancels at the attempt's hard deadline. The slot is taken from the
    // type-erased handler, which forwards cancellation through a slot of its own (one taken
    // from the original handler would be replaced by the wrapper's).
    auto slot = reply->handler->get_cancellation_slot();
    if (slot.is_connected()) {
      auto on_cancel = [reply, if_cancelled](asio::cancellation_type) mutable {
        reply->Answer(std::move(if_cancelled));
      };
      slot.assign(std::move(on_cancel));
    }
  };
  T value = co_await asio::async_initiate<const asio::use_awaitable_t<>&, void(T)>(
      std::move(initiation), asio::use_awaitable);
  co_return value;
}

AttemptOutcome Unknown(const std::string& code, const std::string& message) {
  return ToolFailed(FailureKind::kUnknown, code, message);
}

ReconcileOutcome StillUnknown(const std::string& message) {
  ReconcileOutcome outcome;
  outcome.verdict = ReconcileVerdict::kStillUnknown;
  outcome.message = message;
  return outcome;
}

}  // namespace

SimFleet::SimFleet(int workers, SimScheduler& agenda, Clock& clock, SimRng& rng,
                   const SimFaults& faults, SimCounts& counts, SimNetwork& network,
                   SimProvider& provider, SideEffectOf side_effect_of)
    : agenda_(agenda),
      clock_(clock),
      rng_(rng),
      faults_(faults),
      counts_(counts),
      network_(network),
      provider_(provider),
      side_effect_of_(std::move(side_effect_of)),
      nodes_(static_cast<std::size_t>(workers)) {}

SimFleet::~SimFleet() { DetachServer(); }

void SimFleet::AttachServer(asio::any_io_executor executor, Engine& engine) {
  ++server_life_;
  executor_ = std::move(executor);
  engine_ = &engine;
}

void SimFleet::DetachServer() {
  for (auto& [id, call] : calls_) {
    if (call->attempt) call->attempt->Abandon();
    if (call->reconcile) call->reconcile->Abandon();
  }
  engine_ = nullptr;
  executor_ = {};
}

int SimFleet::waiting() const {
  int n = 0;
  for (const auto& [id, call] : calls_) n += call->waited_on() ? 1 : 0;
  return n;
}

std::string SimFleet::DescribeWaiting() const {
  std::string out;
  for (const auto& [id, call] : calls_) {
    if (!call->waited_on()) continue;
    out += std::string(call->lookup ? " lookup " : " attempt ") + call->operation_id + "/" +
           std::to_string(call->number) + " on worker " + std::to_string(call->node) +
           " life " + std::to_string(call->node_life) + ";";
  }
  return out;
}

int SimFleet::PickNode() {
  std::vector<int> up;
  for (int i = 0; i < workers(); ++i) {
    if (!nodes_[static_cast<std::size_t>(i)].down) up.push_back(i);
  }
  if (up.empty()) return -1;
  return up[rng_.Below(up.size())];
}

SimFleet::Call& SimFleet::NewCall(std::uint64_t& id, int node, const std::string& workflow_id,
                                  const std::string& operation_id, std::uint32_t number) {
  id = ++next_call_;
  auto call = std::make_unique<Call>();
  call->server_life = server_life_;
  call->node = node;
  call->node_life = nodes_[static_cast<std::size_t>(node)].life;
  call->workflow_id = workflow_id;
  call->operation_id = operation_id;
  call->number = number;
  return *calls_.emplace(id, std::move(call)).first->second;
}

asio::awaitable<AttemptOutcome> SimFleet::RunAttempt(AttemptRequest request) {
  const int node = PickNode();
  if (node < 0) {
    counts_.Add("event.no_worker");
    AttemptOutcome none = ToolFailed(FailureKind::kRetryable, "no_worker",
                                     "no worker is connected");
    none.not_started = true;
    co_return none;
  }
  std::uint64_t id = 0;
  Call& call = NewCall(id, node, request.run.workflow_id, request.operation_id, request.attempt);
  call.attempt = std::make_shared<Reply<AttemptOutcome>>();
  call.attempt->executor = executor_;
  auto reply = call.attempt;
  const int life = call.node_life;
  counts_.Add("event.attempts_sent");
  auto deliver = [this, id, node, life, request] { WorkerAttempt(id, node, life, request); };
  network_.Send(deliver);
  AttemptOutcome cancelled =
      Unknown("deadline_exceeded", "the server stopped waiting at the attempt's deadline");
  AttemptOutcome outcome = co_await Await(std::move(reply), std::move(cancelled));
  co_return outcome;
}

asio::awaitable<ReconcileOutcome> SimFleet::Reconcile(ReconcileRequest request) {
  const int node = PickNode();
  if (node < 0) co_return StillUnknown("no worker is connected");
  std::uint64_t id = 0;
  Call& call = NewCall(id, node, request.run.workflow_id, request.operation_id, request.round);
  call.lookup = true;
  call.reconcile = std::make_shared<Reply<ReconcileOutcome>>();
  call.reconcile->executor = executor_;
  auto reply = call.reconcile;
  const int life = call.node_life;
  counts_.Add("event.lookups_sent");
  auto deliver = [this, id, node, life, request] { WorkerLookup(id, node, life, request); };
  network_.Send(deliver);
  auto timeout = [reply] { reply->Answer(StillUnknown("the lookup timed out")); };
  agenda_.At(Now() + kLookupTimeoutUs, timeout);
  ReconcileOutcome cancelled = StillUnknown("the lookup was cancelled");
  ReconcileOutcome outcome = co_await Await(std::move(reply), std::move(cancelled));
  co_return outcome;
}

bool SimFleet::Admit(int node, int life, const std::function<void()>& again) {
  Node& n = nodes_[static_cast<std::size_t>(node)];
  if (n.life != life || n.down) {
    counts_.Add("event.to_dead_worker");
    return false;  // the connection died with the process it led to
  }
  if (Now() < n.paused_until_us) {
    n.held.push_back(again);
    return false;
  }
  return true;
}

void SimFleet::WorkerAttempt(std::uint64_t id, int node, int life,
                             const AttemptRequest& request) {
  auto again = [this, id, node, life, request] { WorkerAttempt(id, node, life, request); };
  if (!Admit(node, life, again)) return;
  if (faults_.active && rng_.Chance(faults_.worker_pause * 10)) {
    PauseWorker(node, rng_.Between(30'000, 150'000));  // just as the request arrived
    nodes_[static_cast<std::size_t>(node)].held.push_back(again);
    return;
  }
  Node& n = nodes_[static_cast<std::size_t>(node)];
  const std::string key = "a/" + request.operation_id + "/" + std::to_string(request.attempt);
  if (!n.seen.insert(key).second) {
    counts_.Add("event.worker_ignored_duplicate");
    return;
  }
  AttemptOutcome outcome;
  if (Now() > request.deadline_us) {
    counts_.Add("event.worker_refused_late_attempt");
    outcome = Unknown("deadline_passed", "the attempt arrived after its deadline; not run");
  } else {
    ProviderReply reply = provider_.Execute(request.operation_id, side_effect_of_(request.tool));
    outcome = reply.reply_lost
                  ? Unknown("reply_lost", "the provider did not answer before the call timed out")
                  : std::move(reply.outcome);
  }
  auto answer = [this, id, outcome] { ServerGotAttempt(id, outcome); };
  network_.Send(answer);
}

void SimFleet::WorkerLookup(std::uint64_t id, int node, int life,
                            const ReconcileRequest& request) {
  auto again = [this, id, node, life, request] { WorkerLookup(id, node, life, request); };
  if (!Admit(node, life, again)) return;
  Node& n = nodes_[static_cast<std::size_t>(node)];
  const std::string key = "l/" + request.operation_id + "/" + std::to_string(request.round);
  if (!n.seen.insert(key).second) {
    counts_.Add("event.worker_ignored_duplicate");
    return;
  }
  ReconcileOutcome outcome = provider_.Lookup(request.operation_id);
  auto answer = [this, id, outcome] { ServerGotLookup(id, outcome); };
  network_.Send(answer);
}

void SimFleet::ServerGotAttempt(std::uint64_t id, const AttemptOutcome& outcome) {
  if (engine_ == nullptr) return;  // no server runs: the worker's report is lost with it
  Call& call = *calls_.at(id);
  if (call.server_life == server_life_ && !call.attempt->answered) {
    call.attempt->Answer(outcome);
    return;
  }
  counts_.Add("event.late_reports");
  engine_->ReportLateAttempt(call.workflow_id, call.operation_id, call.number, outcome);
}

void SimFleet::ServerGotLookup(std::uint64_t id, const ReconcileOutcome& outcome) {
  if (engine_ == nullptr) return;
  Call& call = *calls_.at(id);
  if (call.server_life == server_life_) call.reconcile->Answer(outcome);
}

void SimFleet::LoseCalls(int node, int life, const std::string& code) {
  for (auto& [id, call] : calls_) {
    if (call->node != node || call->node_life != life || call->server_life != server_life_) {
      continue;
    }
    if (call->attempt && !call->attempt->answered) {
      counts_.Add("event.attempts_lost_with_worker");
      call->attempt->Answer(Unknown(code, "the worker running the attempt was lost"));
    }
    if (call->reconcile && !call->reconcile->answered) {
      call->reconcile->Answer(StillUnknown("the worker running the lookup was lost"));
    }
  }
}

void SimFleet::CrashWorker(int node) {
  Node& n = nodes_[static_cast<std::size_t>(node)];
  if (n.down) return;
  counts_.Add("fault.worker_crashed");
  const int old_life = n.life++;
  n.down = true;
  n.seen.clear();
  n.held.clear();
  n.paused_until_us = 0;
  auto reset = [this, node, old_life] { LoseCalls(node, old_life, "worker_lost"); };
  agenda_.At(Now() + 1'000, reset);
  auto restart = [this, node] { nodes_[static_cast<std::size_t>(node)].down = false; };
  agenda_.At(Now() + rng_.Between(5'000, 50'000), restart);
}

void SimFleet::PauseWorker(int node, std::int64_t duration_us) {
  Node& n = nodes_[static_cast<std::size_t>(node)];
  if (n.down || Now() < n.paused_until_us) return;
  counts_.Add("fault.worker_paused");
  n.paused_until_us = Now() + duration_us;
  const std::uint64_t epoch = ++n.pause_epoch;
  const int life = n.life;
  auto lease = [this, node, epoch, life] {
    Node& m = nodes_[static_cast<std::size_t>(node)];
    if (m.pause_epoch == epoch && m.life == life && Now() < m.paused_until_us) {
      counts_.Add("fault.lease_expired");
      LoseCalls(node, life, "lease_expired");
    }
  };
  agenda_.At(Now() + kLeaseUs, lease);
  auto wake = [this, node, epoch, life] {
    Node& m = nodes_[static_cast<std::size_t>(node)];
    if (m.pause_epoch != epoch || m.life != life) return;
    std::vector<std::function<void()>> held;
    held.swap(m.held);
    for (auto& run : held) run();
  };
  agenda_.At(n.paused_until_us, wake);
}

}  // namespace reckon::sim
