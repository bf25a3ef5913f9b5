// FakeProvider: an in-memory provider (think payments API) that behaves, for tests of workflows
// (testkit/test_env.h) and of the engine itself.
//
// Its ledger is keyed by idempotency key, which the tools built here send as the operation id.
// Each call to a tool follows the next step of that tool's script (default: commit and reply),
// so a test can make the provider commit and then lose the reply, refuse before committing,
// reject, or hang past the attempt's deadline while honouring or ignoring cancellation. Lookups
// answer from the ledger (committed with the reference, or not_found) unless scripted to answer
// still_unknown. Effects are counted per key, so a test can assert exactly-once.
//
// With dedup (the default) a second commit of a key returns the first effect, as Stripe does
// inside its window; without it every commit is a new effect, which makes a blind retry of a
// non-repeatable write visible as a second effect.
//
// Register it as a tool with ProviderTool(contract, provider) (below); the tool sends the
// operation id as the idempotency key, so effects(op_id) == 1 after a run proves exactly-once.
//
// Lifetime: must outlive every io_context whose coroutines use it (coroutines of a destroyed
// io_context unregister themselves as their frames die). Not thread-safe: one io thread.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "reckon/contract/contract.h"
#include "reckon/engine/tool_dispatcher.h"
#include "reckon/worker/tool.h"

namespace reckon::testkit {

enum class Behaviour {
  kCommit,           // commit the effect (a write) and reply with its reference
  kCommitLoseReply,  // commit, then the reply is lost: the tool reports kUnknown "reply_lost"
  kLoseRequest,      // the request never reached the ledger: kUnknown "connection_reset"
  kRefuse,           // refused before commit (HTTP 429): kRetryable "rate_limited"
  kReject,           // definitive rejection, nothing committed: kDefinitive "card_declined"
  kHang,             // never answers, nothing committed; stops when cancelled
  kCommitThenHang,   // commits, then never answers; stops when cancelled
  kLateCommit,       // ignores cancellation: waits `delay`, then commits and replies
};

struct Step {
  Behaviour behaviour = Behaviour::kCommit;
  std::string code;                    // overrides the behaviour's failure code
  std::chrono::milliseconds delay{0};  // kLateCommit: how late (others: ignored)
  int wait_for_in_flight = 0;          // first wait until this many calls are in flight
};

enum class LookupAnswer {
  kTruth,         // committed (with the reference) if the ledger has the key, else not_found
  kStillUnknown,  // the provider cannot tell yet
};

struct CallRecord {
  std::string tool;
  std::string step_id;
  std::string key;  // the idempotency key the tool sent: the operation id
  std::uint32_t attempt = 0;
  boost::json::value input;  // as the tool received it, secrets included
  Behaviour behaviour = Behaviour::kCommit;
};

class FakeProvider {
 public:
  explicit FakeProvider(bool dedup = true) : dedup_(dedup) {}
  FakeProvider(const FakeProvider&) = delete;
  FakeProvider& operator=(const FakeProvider&) = delete;

  // Appends steps to `tool`'s script; calls beyond the script commit and reply.
  void Script(const std::string& tool, std::vector<Step> steps);
  // Appends answers to `tool`'s lookup script; lookups beyond it answer the truth.
  void ScriptLookups(const std::string& tool, std::vector<LookupAnswer> answers);
  // Runs when a call arrives, before it is handled (e.g. to crash the engine mid-attempt).
  void OnCall(std::function<void(const CallRecord&)> hook) { on_call_ = std::move(hook); }

  // One attempt of `tool`. `writes` is false for read_only tools (nothing reaches the ledger).
  boost::asio::awaitable<AttemptOutcome> Execute(std::string tool, bool writes,
                                                 boost::json::value input,
                                                 ToolCallContext context);
  boost::asio::awaitable<ReconcileOutcome> Lookup(std::string tool, ToolCallContext context);

  // --- what happened ---
  int effects(const std::string& key) const;  // committed effects of one key
  int total_effects() const;
  std::string ref_of(const std::string& key) const;  // the first effect's reference
  const std::vector<CallRecord>& calls() const { return calls_; }
  std::vector<CallRecord> calls_to(const std::string& tool) const;
  int lookups(const std::string& tool) const;
  int in_flight() const { return in_flight_; }
  int max_in_flight() const { return max_in_flight_; }

 private:
  struct Entry {
    int effects = 0;
    std::string ref;
  };
  // Commits `key` (or, with dedup, finds its effect) and returns the reference.
  std::string Commit(const std::string& key);
  Step NextStep(const std::string& tool);
  boost::asio::awaitable<bool> WaitForInFlight(int count);
  void Wake();

  bool dedup_;
  std::map<std::string, std::deque<Step>> scripts_;
  std::map<std::string, std::deque<LookupAnswer>> lookup_scripts_;
  std::function<void(const CallRecord&)> on_call_;
  std::map<std::string, Entry> ledger_;
  int next_ref_ = 1;
  std::vector<CallRecord> calls_;
  std::map<std::string, int> lookups_;
  int in_flight_ = 0;
  int max_in_flight_ = 0;
  struct Waiter {
    boost::asio::steady_timer timer;
    int count = 0;
    bool reached = false;
  };
  std::vector<Waiter*> waiters_;  // calls waiting for others (in their frames); not owned
};

// A tool over `provider` with `contract`: execute forwards to Execute, and a lookup contract
// gets a reconcile that forwards to Lookup. The provider must outlive the registry.
Tool ProviderTool(ToolContract contract, FakeProvider& provider);

}  // namespace reckon::testkit
