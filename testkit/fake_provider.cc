#include "reckon/testkit/fake_provider.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/object.hpp>

#include <algorithm>

namespace reckon::testkit {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

// Waits `duration`; returns false if the engine cancelled the call first.
asio::awaitable<bool> SleepHonouringCancel(std::chrono::milliseconds duration) {
  asio::steady_timer timer(co_await asio::this_coro::executor, duration);
  auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
  co_return !ec;
}

// Waits `duration` whatever the engine says: the wait is bound to an empty cancellation slot,
// like a provider call that has left the process and cannot be called back.
asio::awaitable<void> SleepIgnoringCancel(std::chrono::milliseconds duration) {
  asio::steady_timer timer(co_await asio::this_coro::executor, duration);
  auto token =
      asio::bind_cancellation_slot(asio::cancellation_slot(), asio::as_tuple(asio::use_awaitable));
  co_await timer.async_wait(token);
}

std::string CodeOr(const Step& step, const char* fallback) {
  return step.code.empty() ? std::string(fallback) : step.code;
}

constexpr auto kForever = std::chrono::hours(1);

// Counts a call as in flight for as long as its coroutine frame lives (also when the frame is
// destroyed with its io_context, as in a crash).
struct InFlightGuard {
  InFlightGuard(int& count, int& max) : count_(count) { max = std::max(max, ++count_); }
  ~InFlightGuard() { --count_; }
  int& count_;
};

}  // namespace

void FakeProvider::Script(const std::string& tool, std::vector<Step> steps) {
  auto& script = scripts_[tool];
  for (Step& step : steps) script.push_back(std::move(step));
}

void FakeProvider::ScriptLookups(const std::string& tool, std::vector<LookupAnswer> answers) {
  auto& script = lookup_scripts_[tool];
  script.insert(script.end(), answers.begin(), answers.end());
}

Step FakeProvider::NextStep(const std::string& tool) {
  auto& script = scripts_[tool];
  if (script.empty()) return Step{};
  Step step = std::move(script.front());
  script.pop_front();
  return step;
}

std::string FakeProvider::Commit(const std::string& key) {
  Entry& entry = ledger_[key];
  if (dedup_ && entry.effects > 0) return entry.ref;
  ++entry.effects;
  std::string ref = "ref_" + std::to_string(next_ref_++);
  if (entry.ref.empty()) entry.ref = ref;
  return ref;
}

void FakeProvider::Wake() {
  for (Waiter* waiter : waiters_) {
    if (in_flight_ < waiter->count) continue;
    waiter->reached = true;  // the count was reached now, even if calls finish before it runs
    waiter->timer.cancel();
  }
}

asio::awaitable<bool> FakeProvider::WaitForInFlight(int count) {
  if (in_flight_ >= count) co_return true;
  Waiter waiter{asio::steady_timer(co_await asio::this_coro::executor, kForever), count};
  waiters_.push_back(&waiter);
  struct Unregister {
    std::vector<Waiter*>& waiters;
    Waiter* waiter;
    ~Unregister() { std::erase(waiters, waiter); }
  } unregister{waiters_, &waiter};
  co_await waiter.timer.async_wait(asio::as_tuple(asio::use_awaitable));
  co_return waiter.reached;  // false: the engine cancelled the call first
}

asio::awaitable<AttemptOutcome> FakeProvider::Execute(std::string tool, bool writes,
                                                      json::value input,
                                                      ToolCallContext context) {
  const Step step = NextStep(tool);
  const std::string key = context.operation_id;
  calls_.push_back(CallRecord{tool, context.step_id, key, context.attempt, input, step.behaviour});
  InFlightGuard in_flight(in_flight_, max_in_flight_);
  Wake();
  if (on_call_) {
    const CallRecord record = calls_.back();
    on_call_(record);
  }
  if (step.wait_for_in_flight > 0) {
    auto wait = WaitForInFlight(step.wait_for_in_flight);
    if (!co_await std::move(wait)) {
      co_return ToolFailed(FailureKind::kUnknown, "cancelled", "cancelled while waiting");
    }
  }
  auto commit = [&]() -> std::string { return writes ? Commit(key) : std::string(); };
  auto reply = [&](const std::string& ref) {
    json::object output{{"ref", ref}, {"tool", tool}};
    return ToolSucceeded(std::move(output), ref);
  };
  switch (step.behaviour) {
    case Behaviour::kCommit:
      co_return reply(commit());
    case Behaviour::kCommitLoseReply:
      commit();
      co_return ToolFailed(FailureKind::kUnknown, CodeOr(step, "reply_lost"),
                           "the connection dropped before the reply arrived");
    case Behaviour::kLoseRequest:
      co_return ToolFailed(FailureKind::kUnknown, CodeOr(step, "connection_reset"),
                           "the connection dropped; the request may or may not have arrived");
    case Behaviour::kRefuse:
      co_return ToolFailed(FailureKind::kRetryable, CodeOr(step, "rate_limited"),
                           "refused before processing");
    case Behaviour::kReject:
      co_return ToolFailed(FailureKind::kDefinitive, CodeOr(step, "card_declined"),
                           "the provider refused the request");
    case Behaviour::kCommitThenHang:
      commit();
      [[fallthrough]];
    case Behaviour::kHang: {
      auto hang = SleepHonouringCancel(kForever);
      co_await std::move(hang);
      co_return ToolFailed(FailureKind::kUnknown, CodeOr(step, "cancelled"),
                           "stopped waiting for the provider");
    }
    case Behaviour::kLateCommit: {
      auto late = SleepIgnoringCancel(step.delay);
      co_await std::move(late);
      co_return reply(commit());
    }
  }
  co_return ToolFailed(FailureKind::kUnknown, "bad_script", "unknown behaviour");
}

asio::awaitable<ReconcileOutcome> FakeProvider::Lookup(std::string tool,
                                                       ToolCallContext context) {
  ++lookups_[tool];
  LookupAnswer answer = LookupAnswer::kTruth;
  if (auto& script = lookup_scripts_[tool]; !script.empty()) {
    answer = script.front();
    script.pop_front();
  }
  ReconcileOutcome outcome;
  if (answer == LookupAnswer::kStillUnknown) {
    outcome.verdict = ReconcileVerdict::kStillUnknown;
    outcome.message = "the provider cannot tell yet";
    co_return outcome;
  }
  auto it = ledger_.find(context.operation_id);
  if (it == ledger_.end() || it->second.effects == 0) {
    outcome.verdict = ReconcileVerdict::kNotFound;
    co_return outcome;
  }
  outcome.verdict = ReconcileVerdict::kCommitted;
  outcome.provider_ref = it->second.ref;
  outcome.output = json::object{{"ref", it->second.ref}, {"tool", tool}};
  co_return outcome;
}

int FakeProvider::effects(const std::string& key) const {
  auto it = ledger_.find(key);
  return it == ledger_.end() ? 0 : it->second.effects;
}

int FakeProvider::total_effects() const {
  int total = 0;
  for (const auto& [key, entry] : ledger_) total += entry.effects;
  return total;
}

std::string FakeProvider::ref_of(const std::string& key) const {
  auto it = ledger_.find(key);
  return it == ledger_.end() ? std::string() : it->second.ref;
}

std::vector<CallRecord> FakeProvider::calls_to(const std::string& tool) const {
  std::vector<CallRecord> out;
  for (const CallRecord& call : calls_) {
    if (call.tool == tool) out.push_back(call);
  }
  return out;
}

int FakeProvider::lookups(const std::string& tool) const {
  auto it = lookups_.find(tool);
  return it == lookups_.end() ? 0 : it->second;
}

Tool ProviderTool(ToolContract contract, FakeProvider& provider) {
  const std::string name = contract.name;
  const bool writes = IsWrite(contract.side_effect);
  FakeProvider* p = &provider;
  Tool tool;
  // The lambdas only forward; the coroutines take their state as parameters.
  tool.execute = [p, name, writes](json::value input, ToolCallContext context) {
    return p->Execute(name, writes, std::move(input), std::move(context));
  };
  if (contract.reconcile.mode == ReconcileMode::kLookup) {
    tool.reconcile = [p, name](json::value, ToolCallContext context) {
      return p->Lookup(name, std::move(context));
    };
  }
  tool.contract = std::move(contract);
  return tool;
}

}  // namespace reckon::testkit
