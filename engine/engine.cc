#include "reckon/engine/engine.h"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include "reckon/base/jcs.h"
#include "reckon/engine/engine_slot.h"
#include "reckon/engine/input_checks.h"

namespace reckon {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace storage;

namespace {
storage::GroupCommitter::Options CommitterOptions(const EngineOptions& options) {
  storage::GroupCommitter::Options out;
  out.on_commit = options.on_commit;
  return out;
}
}  // namespace

Engine::Engine(asio::any_io_executor executor, Journal& journal,
               const ContractRegistry& contracts, WorkflowHost& host, ToolDispatcher& tools,
               Clock& clock, EngineOptions options)
    : executor_(executor),
      journal_(options.reader != nullptr ? *options.reader : journal),
      committer_(journal, options.commit_executor ? options.commit_executor : executor,
                 CommitterOptions(options)),
      contracts_(contracts),
      host_(host),
      tools_(tools),
      clock_(clock),
      options_(std::move(options)),
      timers_(executor, clock),
      alive_(std::make_shared<bool>(true)) {}

Engine::~Engine() {
  *alive_ = false;
  for (auto& [id, slot] : slots_) {
    for (auto& [op, running] : slot->attempts) running.cancel->emit(asio::cancellation_type::terminal);
  }
}

Engine::Slot* Engine::FindSlot(const std::string& workflow_id) const {
  auto it = slots_.find(workflow_id);
  return it == slots_.end() ? nullptr : it->second.get();
}

Engine::Slot* Engine::FindSlotOfOperation(const std::string& operation_id) const {
  // A linear scan of the runs held (docs/ARCHITECTURE.md, decision 52): a sender that knows
  // the run's id gives it, and Complete looks there only.
  for (const auto& [id, slot] : slots_) {
    if (slot->state.FindOperation(operation_id) != nullptr) return slot.get();
  }
  return nullptr;
}

Engine::Slot* Engine::FindLive(const std::string& workflow_id, std::uint64_t serial) const {
  Slot* slot = FindSlot(workflow_id);
  return slot != nullptr && slot->serial == serial ? slot : nullptr;
}

// --- the public face --------------------------------------------------------------------------

asio::awaitable<Result<int>> Engine::Recover() {
  auto all = [](const std::string&) { return true; };
  return Recover(std::move(all));
}

asio::awaitable<Result<int>> Engine::Recover(std::function<bool(const std::string&)> owns) {
  if (failed_) co_return Err(Errc::kUnavailable, "engine stopped: " + failure_);
  RECKON_CO_TRY(auto runs, Read(journal_.ListRuns(storage::RunStatus::kRunning)));
  int resumed = 0;
  std::vector<Slot*> recovered;
  for (RunRow& row : runs) {
    if (!owns(row.ref.workflow_id) || FindSlot(row.ref.workflow_id) != nullptr) continue;
    RECKON_CO_TRY(auto events, Read(journal_.ReadEvents(row.ref)));
    auto slot = std::make_unique<Slot>(row.ref, next_serial_++);
    Slot& s = *slot;
    slots_[row.ref.workflow_id] = std::move(slot);
    if (auto folded = s.state.ApplyAll(events); !folded) {
      Stop(s, folded.error());
      continue;
    }
    s.start_type = s.state.workflow_type();
    s.start_input_json = s.state.input_json();
    s.replay_history = std::move(events);
    Submit(s, RecoverInput{});
    recovered.push_back(&s);
    ++resumed;
  }
  // Every run is held now: a child whose parent closed while the process was down is found.
  for (Slot* slot : recovered) CancelOrphan(*slot);
  co_return resumed;
}

asio::awaitable<Result<RunRef>> Engine::Start(std::string workflow_id, std::string workflow_type,
                                              json::value input) {
  return Start(std::move(workflow_id), std::move(workflow_type), std::move(input), StartOptions{});
}

asio::awaitable<Result<RunRef>> Engine::Start(std::string workflow_id, std::string workflow_type,
                                              json::value input,
                                              std::string definition_hash) {
  StartOptions options;
  options.definition_hash = std::move(definition_hash);
  return Start(std::move(workflow_id), std::move(workflow_type), std::move(input),
               std::move(options));
}

asio::awaitable<Result<RunRef>> Engine::Start(std::string workflow_id, std::string workflow_type,
                                              json::value input, StartOptions options) {
  if (failed_) co_return Err(Errc::kUnavailable, "engine stopped: " + failure_);
  RECKON_CO_TRY(CheckStart(workflow_id, workflow_type, input, options.definition_hash, contracts_));
  RECKON_CO_TRY(std::string input_json, CanonicalizeJson(input));
  // A run that continued as new answers for its chain: the input it holds is the latest run's,
  // so only the type can be compared.
  auto same_start = [&](const std::string& type, const std::string& json,
                        bool continued) -> Result<void> {
    if (type == workflow_type && (json == input_json || continued)) return Ok();
    return Err(Errc::kAlreadyExists,
               "workflow '" + workflow_id + "' was already started as '" + type +
                   "' with a different input; use a new workflow id");
  };
  if (reserved_children_.count(workflow_id)) {
    co_return Err(Errc::kAlreadyExists,
                  "workflow '" + workflow_id + "' is being started as the child of another run; "
                  "use a new workflow id");
  }
  if (Slot* existing = FindSlot(workflow_id)) {
    RECKON_CO_TRY(same_start(existing->start_type, existing->start_input_json,
                             !existing->state.previous_run_id().empty()));
    co_return existing->state.ref();
  }
  // A finished run is only in the journal (the engine lets go of it: DropIfFinished).
  RECKON_CO_TRY(auto latest, Read(journal_.FindLatestRun(workflow_id)));
  if (latest) {
    RECKON_CO_TRY(auto events, Read(journal_.ReadEvents(latest->ref, 1)));
    if (!events.empty()) {
      if (auto* started = std::get_if<WorkflowStarted>(&events.front().body)) {
        RECKON_CO_TRY(same_start(started->workflow_type, started->input_json,
                                 !started->previous_run_id.empty()));
      }
    }
    co_return latest->ref;
  }
  RunRef ref{workflow_id, "r" + std::to_string(clock_.NowMicros())};
  auto slot = std::make_unique<Slot>(ref, next_serial_++);
  Slot& s = *slot;
  s.start_type = workflow_type;
  s.start_input_json = input_json;
  slots_[workflow_id] = std::move(slot);
  // Build the input before the co_await: GCC 12 destroys some temporaries of a co_await
  // expression twice.
  Input start = StartInput{std::move(workflow_type), std::move(input),
                           std::move(options.definition_hash), std::move(options.started_by),
                           options.run_timeout};
  auto started = Await(s, std::move(start));
  RECKON_CO_TRY(co_await std::move(started));
  co_return ref;
}

// Each request is checked (engine/input_checks.h) before it reaches a run: a refused one is
// answered at once, and nothing is journaled. The input is built before the co_await (GCC 12).
asio::awaitable<Result<void>> Engine::Signal(std::string workflow_id, std::string name,
                                             std::string payload_json) {
  return Signal(std::move(workflow_id), std::move(name), std::move(payload_json), std::string());
}

asio::awaitable<Result<void>> Engine::Signal(std::string workflow_id, std::string name,
                                             std::string payload_json, std::string sent_by) {
  return Signal(std::move(workflow_id), std::move(name), std::move(payload_json),
                std::move(sent_by), std::string());
}

asio::awaitable<Result<void>> Engine::Signal(std::string workflow_id, std::string name,
                                             std::string payload_json, std::string sent_by,
                                             std::string request_id) {
  RECKON_CO_TRY(CheckSignal(workflow_id, name, payload_json, contracts_));
  RECKON_CO_TRY(CheckRequestId(request_id, "signal request id"));
  if (!request_id.empty() && FindSlot(workflow_id) == nullptr) {
    // A run the engine let go of (finished): a repeat of a signal it received is still a
    // repeat, answered as the first was.
    RECKON_CO_TRY(auto latest, Read(journal_.FindLatestRun(workflow_id)));
    if (latest && storage::IsTerminal(latest->status)) {  // else SubmitToRun answers
      RECKON_CO_TRY(auto events, Read(journal_.ReadEvents(latest->ref)));
      for (const storage::Event& event : events) {
        const auto* signal = std::get_if<storage::SignalReceived>(&event.body);
        if (signal != nullptr && signal->request_id == request_id) co_return Ok();
      }
    }
  }
  Input input = SignalInput{std::move(name), std::move(payload_json), std::move(sent_by),
                            std::move(request_id)};
  auto signalled = SubmitToRun(std::move(workflow_id), std::move(input));
  co_return co_await std::move(signalled);
}

asio::awaitable<Result<void>> Engine::Complete(Completion completion) {
  RECKON_CO_TRY(CheckCompletion(completion));
  Slot* slot = completion.workflow_id.empty() ? FindSlotOfOperation(completion.operation_id)
                                              : FindSlot(completion.workflow_id);
  if (slot != nullptr && slot->state.FindOperation(completion.operation_id) == nullptr) {
    co_return Err(Errc::kNotFound, "run '" + completion.workflow_id + "' has no operation '" +
                                       completion.operation_id + "'; check both ids");
  }
  if (slot == nullptr) {
    // Not held: settled in a finished run (a redelivery: acknowledged), or not ours.
    RECKON_CO_TRY(auto row, Read(journal_.FindOperation(completion.operation_id)));
    if (!row) {
      co_return Err(Errc::kNotFound, "no operation '" + completion.operation_id +
                                         "' in this journal; check the operation id");
    }
    if (row->state == OperationStateName(OperationState::kCommitted) ||
        row->state == OperationStateName(OperationState::kRejected)) {
      co_return Ok();  // settled already: news of it changes nothing
    }
    co_return Err(Errc::kNotOwner, "the run of operation '" + completion.operation_id +
                                       "' is not held by this engine (another server owns it, "
                                       "or it is being recovered); deliver it again later");
  }
  Input input = CompletionInput{std::move(completion)};
  auto done = Await(*slot, std::move(input));
  co_return co_await std::move(done);
}

asio::awaitable<Result<void>> Engine::DecideApproval(std::string workflow_id,
                                                     ApprovalDecision decision) {
  RECKON_CO_TRY(CheckDecision(workflow_id, decision));
  auto decided = SubmitToRun(std::move(workflow_id), std::move(decision));
  co_return co_await std::move(decided);
}

asio::awaitable<Result<void>> Engine::Resolve(std::string workflow_id,
                                              HumanResolution resolution) {
  RECKON_CO_TRY(CheckResolution(workflow_id, resolution));
  auto resolved = SubmitToRun(std::move(workflow_id), std::move(resolution));
  co_return co_await std::move(resolved);
}

asio::awaitable<Result<void>> Engine::Cancel(std::string workflow_id, std::string reason) {
  return Cancel(std::move(workflow_id), std::move(reason), std::string());
}

asio::awaitable<Result<void>> Engine::Cancel(std::string workflow_id, std::string reason,
                                             std::string requested_by) {
  RECKON_CO_TRY(CheckCancel(workflow_id, reason));
  Input input = CancelInput{std::move(reason), std::move(requested_by)};
  auto cancelled = SubmitToRun(std::move(workflow_id), std::move(input));
  co_return co_await std::move(cancelled);
}

asio::awaitable<int> Engine::Release(std::function<bool(const std::string&)> leaving,
                                     std::string reason, std::chrono::milliseconds patience) {
  std::vector<Slot*> released;
  for (auto it = slots_.begin(); it != slots_.end();) {
    if (!leaving(it->first)) {
      ++it;
      continue;
    }
    Slot& slot = *it->second;
    retired_.push_back(std::move(it->second));
    it = slots_.erase(it);
    Retire(slot, reason);
    released.push_back(&slot);
  }
  // Whoever waits for one of these runs to settle hears that it moved.
  const Error moved = Err(Errc::kNotOwner, reason);
  std::vector<std::unique_ptr<RunWaiter>> waiters;
  waiters.swap(run_waiters_);
  for (auto& waiter : waiters) {
    if (!leaving(waiter->workflow_id)) {
      run_waiters_.push_back(std::move(waiter));
      continue;
    }
    asio::post(executor_, [waiter = std::move(waiter), moved]() mutable {
      std::move(waiter->handler)(Result<RunSummary>(moved));
    });
  }
  // A batch in flight ends by itself (Drive sees `released`); wait for it, so that the caller
  // may give the lease back knowing nothing more of these runs is written.
  asio::steady_timer pause(executor_);
  const auto give_up = std::chrono::steady_clock::now() + patience;
  for (;;) {
    bool busy = false;
    for (Slot* slot : released) busy = busy || slot->busy;
    if (!busy || std::chrono::steady_clock::now() >= give_up) break;
    pause.expires_after(std::chrono::milliseconds(2));
    co_await pause.async_wait(asio::use_awaitable);
  }
  WakeIdleWaiters();
  co_return static_cast<int>(released.size());
}

void Engine::Retire(Slot& slot, const std::string& reason) {
  slot.released = true;
  slot.stuck = reason;
  host_.Evict(slot.state.ref());
  std::deque<Queued> inbox;
  inbox.swap(slot.inbox);
  const Error moved = Err(Errc::kNotOwner, reason);
  DropUpdateWaiters(slot.state.ref().workflow_id, moved);
  for (Queued& queued : inbox) {
    if (!queued.reply) continue;
    asio::post(executor_, [reply = std::move(queued.reply), moved]() mutable {
      std::move(reply)(Result<void>(moved));
    });
  }
}

void Engine::ReportLateAttempt(const std::string& workflow_id, std::string operation_id,
                               std::uint32_t attempt, AttemptOutcome outcome) {
  Slot* slot = FindSlot(workflow_id);
  if (slot == nullptr) return;  // finished: nothing left to learn
  Submit(*slot, AttemptDone{std::move(operation_id), attempt, std::move(outcome)});
}

asio::awaitable<Result<void>> Engine::SubmitToRun(std::string workflow_id, Input input) {
  Slot* slot = FindSlot(workflow_id);
  if (slot == nullptr) {
    // A finished run is let go (DropIfFinished): the journal says it finished.
    RECKON_CO_TRY(auto latest, Read(journal_.FindLatestRun(workflow_id)));
    if (latest && storage::IsTerminal(latest->status)) {
      // The decider's words for a finished run it still holds (Decider::Cancel, ::Signal).
      const std::string status(RunStatusName(latest->status));
      co_return Err(Errc::kFailedPrecondition,
                    std::holds_alternative<CancelInput>(input)
                        ? "run '" + workflow_id + "' is already " + status +
                              "; there is nothing to cancel"
                        : "run '" + workflow_id + "' is " + status +
                              "; it takes no more signals, decisions or resolutions");
    }
    co_return Err(Errc::kNotFound, "no active workflow '" + workflow_id +
                                       "' in this engine; check the id (finished runs take "
                                       "no signals or decisions)");
  }
  auto done = Await(*slot, std::move(input));
  co_return co_await std::move(done);
}

asio::awaitable<Result<void>> Engine::Await(Slot& slot, Input input) {
  auto initiate = [this, &slot](auto handler, Input input) {
    Submit(slot, std::move(input), Reply(std::move(handler)));
  };
  return asio::async_initiate<decltype(asio::use_awaitable), void(Result<void>)>(
      std::move(initiate), asio::use_awaitable, std::move(input));
}

// --- driving a run ---------------------------------------------------------------------------

void Engine::Submit(Slot& slot, Input input, Reply reply) {
  if (failed_ || !slot.stuck.empty()) {
    if (reply) {
      Error error = failed_         ? Err(Errc::kUnavailable, "engine stopped: " + failure_)
                    : slot.released ? Err(Errc::kNotOwner, slot.stuck)
                                    : Err(Errc::kFailedPrecondition,
                                  "run '" + slot.state.ref().workflow_id + "' is stopped: " +
                                      slot.stuck);
      asio::post(executor_, [reply = std::move(reply), error]() mutable {
        std::move(reply)(Result<void>(error));
      });
    }
    return;
  }
  slot.inbox.push_back(Queued{std::move(input), std::move(reply)});
  if (!slot.busy) {
    slot.busy = true;
    asio::co_spawn(executor_, Drive(&slot), asio::detached);
  }
}

Result<void> Engine::ApplyInput(Decider& decider, Slot& slot, Input& input) {
  return std::visit(
      [&](auto& in) -> Result<void> {
        using T = std::decay_t<decltype(in)>;
        if constexpr (std::is_same_v<T, StartInput>) {
          return decider.Start(in.type, in.input, in.definition_hash, in.started_by,
                               in.run_timeout);
        } else if constexpr (std::is_same_v<T, AttemptDone>) {
          return decider.AttemptFinished(in.operation_id, in.attempt, in.outcome);
        } else if constexpr (std::is_same_v<T, DueInput>) {
          return decider.Due(in.operation_id);
        } else if constexpr (std::is_same_v<T, LookupDone>) {
          return decider.ReconcileFinished(in.operation_id, in.round, in.outcome);
        } else if constexpr (std::is_same_v<T, TimerInput>) {
          if (in.run_id != slot.state.ref().run_id) return Ok();  // an earlier run's timer
          return decider.WorkflowTimerFired(in.timer_id);
        } else if constexpr (std::is_same_v<T, SignalInput>) {
          return decider.Signal(in.name, in.payload_json, in.sent_by, in.request_id);
        } else if constexpr (std::is_same_v<T, CompletionInput>) {
          return decider.CompletionArrived(in.completion);
        } else if constexpr (std::is_same_v<T, ApprovalDecision>) {
          return decider.ApprovalDecided(in);
        } else if constexpr (std::is_same_v<T, HumanResolution>) {
          return decider.Resolve(in);
        } else if constexpr (std::is_same_v<T, CancelInput>) {
          return decider.Cancel(in.reason, in.requested_by);
        } else if constexpr (std::is_same_v<T, ChildDoneInput>) {
          return decider.ChildClosed(in.closed);
        } else if constexpr (std::is_same_v<T, UpdateInput>) {
          return decider.AcceptUpdate(in.update_id, in.name, in.args_json, in.sent_by);
        } else {
          (void)slot;
          return decider.Recover();
        }
      },
      input);
}

asio::awaitable<Result<void>> Engine::Activate(Slot& slot, Decider& decider, std::size_t& shown) {
  std::vector<Event> events;
  const bool full = slot.needs_full_history;
  if (full) events = std::move(slot.replay_history);
  events.insert(events.end(), decider.events().begin() + static_cast<std::ptrdiff_t>(shown),
                decider.events().end());
  shown = decider.events().size();
  slot.needs_full_history = false;
  ActivationRequest request{slot.state.ref(), slot.state.workflow_type(), events, full,
                            clock_.NowMicros(), decider.events()};
  RECKON_CO_TRY(auto commands, co_await host_.Activate(request));
  if (auto ran = host_.TakeRanOn(slot.state.ref())) {
    RECKON_CO_TRY(decider.WorkflowTaskRan(std::move(*ran)));
  }
  co_return decider.ApplyCommands(std::move(commands));
}

asio::awaitable<void> Engine::Drive(Slot* slot) {
  auto alive = alive_;
  while (*alive && !failed_ && slot->stuck.empty() && !slot->inbox.empty()) {
    std::deque<Queued> batch;
    batch.swap(slot->inbox);
    Decider decider(slot->state, contracts_, FromMicros(clock_.NowMicros()), options_.decider);
    // Child ids this batch reserves: let go of whatever way the batch ends.
    std::vector<std::string> reserved;
    if (options_.child_workflows) decider.SetChildReserver(ChildReserverFor(reserved));
    const bool was_terminal = slot->state.terminal();
    std::vector<Reply> replies;
    std::size_t shown = 0;
    std::optional<Error> broken;
    for (Queued& queued : batch) {
      if (broken) {
        if (queued.reply) replies.push_back(std::move(queued.reply));
        continue;
      }
      if (std::holds_alternative<RecoverInput>(queued.input)) {
        // Replay first, so that every operation has its full input back before it acts.
        auto replayed = co_await Activate(*slot, decider, shown);
        if (!*alive) co_return;
        if (!replayed) {
          broken = replayed.error();
          continue;
        }
      }
      if (const auto* update = std::get_if<UpdateInput>(&queued.input)) {
        // The validator runs here, inside the run's batch (decision 45).
        auto admitted = co_await AdmitUpdate(*slot, decider, *update);
        if (!*alive) co_return;
        if (!admitted || !admitted.value()) {
          Result<void> answer = admitted ? Result<void>(Ok()) : Result<void>(admitted.error());
          if (queued.reply) std::move(queued.reply)(std::move(answer));
          continue;
        }
      }
      auto applied = ApplyInput(decider, *slot, queued.input);
      if (!applied) {
        const Error& error = applied.error();
        if (error.action() == ErrorAction::kBug || error.code() == Errc::kNondeterminism) {
          broken = error;
          if (queued.reply) replies.push_back(std::move(queued.reply));
        } else if (queued.reply) {
          std::move(queued.reply)(Result<void>(error));  // refused; nothing was emitted
        }
        continue;
      }
      if (queued.reply) replies.push_back(std::move(queued.reply));
    }
    // Let the workflow code react until it has nothing new to see.
    while (!broken && !slot->state.terminal() && decider.HasWorkflowNews(shown)) {
      auto activated = co_await Activate(*slot, decider, shown);
      if (!*alive) co_return;
      if (!activated) broken = activated.error();
    }
    if (!broken) {
      if (auto limited = CheckHistoryLimit(*slot, decider); !limited) broken = limited.error();
    }
    if (broken || slot->released) ReleaseChildIds(reserved);
    if (broken) {
      Stop(*slot, *broken);
      for (Reply& reply : replies) std::move(reply)(Result<void>(*broken));
      break;
    }
    if (slot->released) {
      // Let go while the code ran (Release): nothing of this batch is written here; the run's
      // new owner decides again from the journal.
      const Error moved = Err(Errc::kNotOwner, slot->stuck);
      for (Reply& reply : replies) std::move(reply)(Result<void>(moved));
      break;
    }
    if (!decider.events().empty()) {
      storage::AppendRequest append = decider.BuildAppend();
      auto commit = committer_.AsyncAppend(std::move(append), asio::use_awaitable);
      auto ack = co_await std::move(commit);
      if (!*alive) co_return;
      ReleaseChildIds(reserved);
      if (!ack && ack.error().code() == Errc::kFenced) {
        // Another server took the run's shard over: nothing was written, and the run is
        // theirs now. Let it go (the membership loop lets the rest of the shard go).
        spdlog::warn("{}", ack.error().message());
        if (!slot->released) {
          auto it = slots_.find(slot->state.ref().workflow_id);
          if (it != slots_.end() && it->second.get() == slot) {
            retired_.push_back(std::move(it->second));
            slots_.erase(it);
          }
          Retire(*slot, ack.error().message());
        }
        const Error moved = Err(Errc::kNotOwner, ack.error().message());
        for (Reply& reply : replies) std::move(reply)(Result<void>(moved));
        break;
      }
      if (!ack) {
        Fail(ack.error());
        for (Reply& reply : replies) std::move(reply)(Result<void>(ack.error()));
        break;
      }
      sinks_.OnCommitted(slot->state, decider.events());
      if (ack) BeginChildren(decider.child_starts());
      AnswerUpdates(*slot, decider.events());
    }
    if (slot->released) {
      // Let go while this batch was committed: it is durable, but the run is another
      // server's now, and that server acts on it (from the journal).
      for (Reply& reply : replies) std::move(reply)(Ok());
      break;
    }
    Perform(*slot, decider.actions());
    for (Reply& reply : replies) std::move(reply)(Ok());
    if (slot->state.terminal()) host_.Evict(slot->state.ref());
    if (!was_terminal && slot->state.terminal() && !decider.next_run()) TellParent(slot->state);
    if (decider.next_run()) BeginNextRun(*slot, *decider.next_run());
    if (!slot->cancel_wanted.empty() && !slot->state.terminal() && !decider.events().empty()) {
      // A cancel refused earlier (an operation may have acted) may pass now.
      Submit(*slot, CancelInput{slot->cancel_wanted, "reckon"});
    }
  }
  if (!*alive) co_return;
  slot->busy = false;
  WakeIdleWaiters();
  DropIfFinished(*slot);
}

void Engine::DropIfFinished(Slot& slot) {
  if (!slot.state.terminal() || slot.busy || !slot.inbox.empty() || !slot.stuck.empty() ||
      slot.released || failed_) {
    return;
  }
  if (!slot.attempts.empty() || slot.lookups > 0) return;
  // A due time (a retry, a deadline, a lookup) can still move an operation that is not
  // terminal; once every operation is, what is armed for the run can change nothing.
  bool open = false;
  for (const auto& [id, op] : slot.state.operations()) open = open || !IsTerminal(op.state);
  if (open && slot.dues_armed > 0) return;
  auto it = slots_.find(slot.state.ref().workflow_id);
  if (it == slots_.end() || it->second.get() != &slot) return;
  // Its waiters were answered by WakeIdleWaiters (a finished run is settled); anyone asking
  // later reads the journal (Describe, UntilSettled, Start).
  if (slot.timers_armed > 0 || slot.dues_armed > 0) timers_.Forget(slot.serial);
  slots_.erase(it);  // the host let go of its code when the run finished (Drive)
}

Result<void> Engine::CheckHistoryLimit(Slot& slot, Decider& decider) {
  const HistoryLimits& limits = options_.history;
  const std::int64_t events = slot.state.next_seq() - 1;
  if (slot.state.terminal()) return Ok();
  if (limits.max_events > 0 && events > limits.max_events) {
    const std::string message =
        "the history of run '" + slot.state.ref().workflow_id + "' has " +
        std::to_string(events) + " events, past the limit of " +
        std::to_string(limits.max_events) +
        " (EngineOptions::history.max_events, server flag --history-max-events); have the "
        "workflow call ctx.ContinueAsNew(...) every so many rounds to start a fresh history";
    spdlog::error("run {} failed: {}", slot.state.ref().workflow_id, message);
    std::vector<Command> fail;
    fail.push_back(FailWorkflow{std::string(kHistoryTooLarge), message});
    return decider.ApplyCommands(std::move(fail));
  }
  if (limits.warn_events > 0 && events > limits.warn_events && !slot.warned_history) {
    slot.warned_history = true;
    spdlog::warn("run {} has a history of {} events, past the soft limit of {}; it fails at {} "
                 "(history_too_large): continue it as new (ctx.ContinueAsNew) before then",
                 slot.state.ref().workflow_id, events, limits.warn_events, limits.max_events);
  }
  return Ok();
}

void Engine::BeginNextRun(Slot& slot, const NextRun& next) {
  RunState state(next.ref);
  if (auto folded = state.ApplyAll(next.events); !folded) {
    Stop(slot, folded.error());
    return;
  }
  slot.state = std::move(state);
  // What the old run left armed can do nothing now (it had no open operation): its timers go.
  if (slot.timers_armed > 0 || slot.dues_armed > 0) timers_.Forget(slot.serial);
  slot.timers_armed = 0;
  slot.dues_armed = 0;
  slot.warned_history = false;
  slot.needs_full_history = true;
  slot.replay_history = next.events;
  sinks_.OnCommitted(slot.state, next.events);
  // Runs the new run's code from its first event, as a restart would.
  Submit(slot, RecoverInput{});
}

// --- acting on durable decisions --------------------------------------------------------------

void Engine::Perform(Slot& slot, const std::vector<Action>& actions) {
  const std::string workflow_id = slot.state.ref().workflow_id;
  for (const Action& action : actions) {
    std::visit(
        [&](const auto& a) {
          using T = std::decay_t<decltype(a)>;
          if constexpr (std::is_same_v<T, StartAttemptAction>) {
            StartAttempt(slot, a);
          } else if constexpr (std::is_same_v<T, CancelAttemptAction>) {
            auto it = slot.attempts.find(a.operation_id);
            if (it != slot.attempts.end() && it->second.attempt == a.attempt) {
              it->second.cancel->emit(asio::cancellation_type::terminal);
            }
          } else if constexpr (std::is_same_v<T, StartReconcileAction>) {
            StartLookup(slot, a);
          } else if constexpr (std::is_same_v<T, ArmDueAction>) {
            ++slot.dues_armed;
            auto due = [this, workflow_id, serial = slot.serial, op = a.operation_id] {
              Slot* s = FindLive(workflow_id, serial);
              if (s == nullptr) return;
              --s->dues_armed;
              Submit(*s, DueInput{op});
            };
            timers_.Arm(a.due_at_us, slot.serial, std::move(due));
          } else if constexpr (std::is_same_v<T, WatchChildAction>) {
            WatchChild(slot, a);
          } else if constexpr (std::is_same_v<T, CancelChildAction>) {
            CancelChild(a);
          } else {
            ++slot.timers_armed;
            auto fire = [this, workflow_id, serial = slot.serial, timer = a.timer_id,
                         run = slot.state.ref().run_id] {
              Slot* s = FindLive(workflow_id, serial);
              if (s == nullptr) return;
              --s->timers_armed;
              Submit(*s, TimerInput{timer, run});
            };
            timers_.Arm(a.fire_at_us, slot.serial, std::move(fire));
          }
        },
        action);
  }
}

void Engine::StartAttempt(Slot& slot, const StartAttemptAction& action) {
  OperationRecord* op = slot.state.FindOperation(action.operation_id);
  if (op == nullptr || !op->input) {
    Stop(slot, Err(Errc::kInternal, "attempt of '" + action.operation_id +
                                        "' has no input in memory"));
    return;
  }
  AttemptRequest request{slot.state.ref(), op->step_id, op->operation_id, op->tool, *op->input,
                         action.attempt, action.deadline_us};
  if (const ToolContract* contract = contracts_.Find(op->tool); contract != nullptr) {
    request.heartbeat_timeout = contract->heartbeat_timeout;
    request.schedule_to_start_timeout = contract->schedule_to_start_timeout;
  }
  request.last_heartbeat_details_json = op->last_heartbeat_details_json;
  auto cancel = std::make_shared<asio::cancellation_signal>();
  slot.attempts[action.operation_id] = Slot::RunningAttempt{action.attempt, cancel};
  auto on_done = [this, alive = alive_, workflow_id = slot.state.ref().workflow_id,
                  serial = slot.serial, op_id = action.operation_id, attempt = action.attempt,
                  cancel](std::exception_ptr thrown, AttemptOutcome outcome) {
    if (!*alive) return;
    Slot* s = FindLive(workflow_id, serial);
    if (s == nullptr) return;  // the run moved to another server (Release)
    if (thrown) {
      // The tool threw: it may have acted before it did, so the outcome is unknown.
      outcome = AttemptOutcome{};
      outcome.kind = FailureKind::kUnknown;
      outcome.code = "tool_exception";
      outcome.message = "the tool threw instead of returning an outcome";
    }
    auto it = s->attempts.find(op_id);
    if (it != s->attempts.end() && it->second.attempt == attempt) s->attempts.erase(it);
    Submit(*s, AttemptDone{op_id, attempt, std::move(outcome)});
  };
  asio::co_spawn(executor_, tools_.RunAttempt(std::move(request)),
                 asio::bind_cancellation_slot(cancel->slot(), std::move(on_done)));
}

void Engine::StartLookup(Slot& slot, const StartReconcileAction& action) {
  OperationRecord* op = slot.state.FindOperation(action.operation_id);
  if (op == nullptr) return;
  ReconcileRequest request{slot.state.ref(), op->operation_id, op->tool,
                           op->input ? *op->input : json::value(), action.round,
                           ToMicros(FromMicros(clock_.NowMicros()) + options_.lookup_timeout)};
  auto cancel = std::make_shared<asio::cancellation_signal>();
  ++slot.lookups;
  auto timer = std::make_shared<asio::steady_timer>(executor_, options_.lookup_timeout);
  timer->async_wait([cancel](const boost::system::error_code& ec) {
    if (!ec) cancel->emit(asio::cancellation_type::terminal);
  });
  auto on_done = [this, alive = alive_, workflow_id = slot.state.ref().workflow_id,
                  serial = slot.serial, op_id = action.operation_id, round = action.round, timer,
                  cancel](std::exception_ptr thrown, ReconcileOutcome outcome) {
    if (!*alive) return;
    timer->cancel();
    Slot* s = FindLive(workflow_id, serial);
    if (s == nullptr) return;  // the run moved to another server (Release)
    --s->lookups;
    if (thrown) {
      outcome = ReconcileOutcome{};
      outcome.verdict = ReconcileVerdict::kStillUnknown;
      outcome.message = "the lookup failed or timed out";
    }
    Submit(*s, LookupDone{op_id, round, std::move(outcome)});
  };
  asio::co_spawn(executor_, tools_.Reconcile(std::move(request)),
                 asio::bind_cancellation_slot(cancel->slot(), std::move(on_done)));
}

void Engine::Stop(Slot& slot, const Error& error) {
  slot.stuck = error.ToString();
  spdlog::error("run {} stopped: {}", slot.state.ref().workflow_id, slot.stuck);
  sinks_.OnRunStopped(slot.state, slot.stuck);
  DropUpdateWaiters(slot.state.ref().workflow_id,
                    Err(Errc::kFailedPrecondition,
                        "run '" + slot.state.ref().workflow_id + "' is stopped: " + slot.stuck));
  WakeIdleWaiters();
}

void Engine::Fail(const Error& error) {
  if (failed_) return;  // the first failure is the cause; later ones follow from it
  failed_ = true;
  failure_ = error.ToString();
  spdlog::critical("engine stopped, restart the process to recover from the journal: {}",
                   failure_);
  timers_.Clear();
  // Nobody waits in vain: every queued request of every run is answered now.
  const Error stopped = Err(Errc::kUnavailable, "engine stopped: " + failure_);
  DropUpdateWaiters("", stopped);
  for (auto& [id, slot] : slots_) {
    std::deque<Queued> inbox;
    inbox.swap(slot->inbox);
    for (Queued& queued : inbox) {
      if (!queued.reply) continue;
      asio::post(executor_, [reply = std::move(queued.reply), stopped]() mutable {
        std::move(reply)(Result<void>(stopped));
      });
    }
  }
  WakeIdleWaiters();
  if (on_failed_) {
    auto callback = std::move(on_failed_);
    callback(error);
  }
}

}  // namespace reckon
