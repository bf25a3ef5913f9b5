// The approval mutation property (issue 16, section 4; docs/TESTING.md, "Approval mutation
// property"). For a random valid input of every sample tool (engine/testdata/approval_mutation),
// approved by a reviewer who saw its intent hash, a change of any single field after the
// approval (at any depth, in an array element, or of its type) must need a new approval, and a
// change of a secret field must not: its intent hash stays the same and the grant still holds.
//
// Each case goes through the pure decider (engine/decider.h), as the engine runs it:
//  1. run A schedules the original input (approval required by the call), and ApprovalDecided
//     grants it for the hash the reviewer saw: the attempt starts;
//  2. run A restarts and its code replays the step with the mutated input: refused as
//     nondeterminism (the history's intent differs) unless only a secret field changed;
//  3. run B, the same workflow, step and operation id, schedules the mutated input. Refused as
//     invalid input, nothing can use a grant; otherwise it waits for approval, and its intent
//     hash must differ from A's unless only a secret field changed;
//  4. the grant carried over: B's history followed by A's ApprovalGranted (bound to A's hash),
//     AttemptStarted and a retryable failure of that attempt, folded as at a restart; the step
//     is replayed with B's input and the retry falls due: the decider must ask for a new
//     approval (CheckGrant refuses the grant) unless only a secret field changed, in which
//     case the retry starts under the old grant;
//  5. a reviewer's decision for A's hash reaches run B: refused (kPermissionDenied, nothing
//     journaled) unless only a secret field changed.
// Every case is decided twice: under the contract as the sample ships it, and "opened" (any
// value allowed for each property, members may be added), so that a change of a field's type
// reaches steps 4 and 5 instead of stopping at the schema.
//
// Seeds: case n uses seed n (tool n mod 3). RECKON_APPROVAL_MUTATION_CASES sets how many
// (default 300; the heavy-tier entry runs more), RECKON_APPROVAL_MUTATION_SEED runs one seed.
// A failure prints its seed. The mutant test proves the property bites: an engine that leaves
// one non-secret field out of the hash (declared secret to the engine only) must be caught.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "reckon/contract/contract_json.h"
#include "reckon/engine/decider.h"
#include "reckon/engine/testing/intent_mutation.h"

namespace reckon {
namespace {

using namespace std::chrono_literals;
using namespace storage;
namespace json = boost::json;
namespace mut = reckon::testing;

const TimePoint kT0 = FromMicros(1'700'000'000'000'000);
constexpr char kStep[] = "s1";
const RunRef kRun{"wf-approval-property", "r1"};

std::vector<ToolContract> SampleContracts() {
  const std::string path =
      std::string(RECKON_APPROVAL_MUTATION_TESTDATA) + "/sample_tool_contracts.json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  std::vector<ToolContract> out;
  const json::value all = json::parse(text.str());
  for (const json::value& c : all.as_array()) {
    auto contract = ContractFromJson(c);
    if (!contract) throw std::runtime_error(path + ": " + contract.error().message());
    out.push_back(std::move(contract.value()));
  }
  return out;
}

std::vector<std::string> PropertyNames(const ToolContract& c) {
  std::vector<std::string> names;
  if (const json::value* props = c.input_schema.as_object().if_contains("properties")) {
    for (const auto& member : props->as_object()) names.emplace_back(member.key());
  }
  return names;
}

// The contract with its input schema opened (see the top) and approval always required.
ToolContract Opened(ToolContract c) {
  json::object properties;
  for (const std::string& name : PropertyNames(c)) properties[name] = json::object{};
  c.input_schema = json::object{{"type", "object"}, {"properties", std::move(properties)}};
  c.approval.kind = ApprovalKind::kAlways;
  c.approval.when.clear();
  if (c.approval.grant_ttl.count() == 0) c.approval.grant_ttl = 1h;
  return c;
}

// The test-only mutant: the engine hashes as if `field` were secret, i.e. leaves it out.
ToolContract Ignoring(ToolContract c, const std::string& field) {
  c.secret_fields.push_back(field);
  return c;
}

// The field each tool's mutant ignores (a property of the tool, not a secret, not in a rule).
const std::map<std::string, std::string> kIgnoredByMutant = {
    {"lookup_payment", "payment_id"}, {"send_refund", "payment_id"}, {"model.propose", "messages"}};

ContractRegistry RegistryOf(const std::vector<ToolContract>& contracts, bool opened, bool mutant) {
  ContractRegistry registry;
  for (ToolContract c : contracts) {
    if (opened) c = Opened(std::move(c));
    if (mutant) c = Ignoring(std::move(c), kIgnoredByMutant.at(c.name));
    auto registered = registry.Register(std::move(c));
    if (!registered) throw std::runtime_error(registered.error().message());
  }
  return registry;
}

// What one decider batch did.
struct Batch {
  bool ok = false;
  Errc code = Errc::kInternal;  // when !ok
  std::string message;          // when !ok
  std::vector<Event> events;
  std::string names;  // event type names, space-separated

  template <class T>
  const T* Find() const {
    for (const Event& e : events) {
      if (const T* body = std::get_if<T>(&e.body)) return body;
    }
    return nullptr;
  }
  std::string Text() const { return "[" + names + "]" + (ok ? "" : " refused: " + message); }
};

template <class Input>
Batch Decide(RunState& state, const ContractRegistry& contracts, TimePoint now, Input input) {
  Decider decider(state, contracts, now);
  Result<void> result = input(decider);
  Batch batch;
  batch.ok = result.has_value();
  if (!batch.ok) {
    batch.code = result.error().code();
    batch.message = result.error().message();
  }
  batch.events = decider.events();
  for (const Event& e : batch.events) {
    batch.names += (batch.names.empty() ? "" : " ") + std::string(EventTypeName(e.body));
  }
  return batch;
}

std::vector<Command> OneCall(const std::string& tool, const json::value& input, bool replayed) {
  std::vector<Command> commands;
  commands.push_back(ScheduleCall{kStep, tool, input, replayed,
                                  CallOverrides{.max_attempts = 0, .require_approval = true}});
  return commands;
}

Batch StartAndCall(RunState& state, const ContractRegistry& contracts, const std::string& tool,
                   const json::value& input) {
  return Decide(state, contracts, kT0, [&](Decider& d) -> Result<void> {
    RECKON_TRY(d.Start("approval-property", json::object{}));
    return d.ApplyCommands(OneCall(tool, input, false));
  });
}

Batch Approve(RunState& state, const ContractRegistry& contracts, TimePoint now,
              const std::string& approval_id, const std::string& reviewed_hash) {
  const ApprovalDecision decision{approval_id, "", reviewed_hash, true, "alice", "", "looks right"};
  return Decide(state, contracts, now, [&](Decider& d) { return d.ApprovalDecided(decision); });
}

struct Tally {
  int cases = 0;             // seeds run
  int decided = 0;           // cases x engine variants
  int secret = 0;            // of decided: only a secret field changed
  int refused_invalid = 0;   // of decided: the mutated input failed the schema
  int asked_again = 0;       // of decided: a new approval was asked (steps 2 to 5 held)
  int grant_kept = 0;        // of decided: secret change, the old grant still served
  int nested = 0;            // of cases: the change lies below a top-level member
  int in_array = 0;          // of cases: the change lies in an array element
  std::map<std::string, int> by_mutation;
};

// Steps 1 to 5 (see the top) under `engine`; "" if the property held, else every check that
// broke ("; "-separated: a broken hash does not stop steps 4 and 5, so each shows it bites).
std::string CheckCase(const ContractRegistry& engine, const ToolContract& truth,
                      const json::value& input, const mut::Mutation& m, Tally& tally) {
  const std::string& tool = truth.name;
  std::string broken;
  auto fail = [&broken](const std::string& what) {
    broken += (broken.empty() ? "" : "; ") + what;
  };
  const bool secret = mut::UnderSecretField(m.path, truth.secret_fields);
  ++tally.decided;
  if (secret) ++tally.secret;

  // 1. The original input, approved for the hash the reviewer saw.
  RunState a(kRun);
  const Batch asked = StartAndCall(a, engine, tool, input);
  if (asked.names != "WorkflowStarted OperationPrepared ApprovalRequested") {
    return "setup: the original (valid) input was not sent for approval: " + asked.Text();
  }
  const OperationRecord& op_a = *a.FindOperationByStep(kStep);
  const std::string old_hash = op_a.intent_hash;
  const std::string operation_id = op_a.operation_id;
  const std::string approval_id = op_a.approval_id;
  const Batch granted = Approve(a, engine, kT0 + 1s, approval_id, old_hash);
  if (!granted.ok || granted.names != "ApprovalGranted AttemptStarted") {
    return "setup: granting the original intent did not start its attempt: " + granted.Text();
  }

  // 2. A restart of run A whose code now passes the mutated input.
  RunState restarted(kRun);
  std::vector<Event> history_a = asked.events;
  history_a.insert(history_a.end(), granted.events.begin(), granted.events.end());
  if (auto folded = restarted.ApplyAll(history_a); !folded) {
    return "setup: folding run A's history failed: " + folded.error().message();
  }
  const Batch replayed = Decide(restarted, engine, kT0 + 1200ms, [&](Decider& d) {
    return d.ApplyCommands(OneCall(tool, m.input, /*replayed=*/true));
  });
  if (secret && (!replayed.ok || !replayed.names.empty())) {
    fail("a replay that changed only a secret field was refused: " + replayed.Text());
  }
  if (!secret && (replayed.ok || replayed.code != Errc::kNondeterminism)) {
    fail("a replay with the changed input was accepted: " + replayed.Text());
  }

  // 3. The same step of the same run, with the mutated input.
  RunState b(kRun);
  const Batch changed = StartAndCall(b, engine, tool, m.input);
  const OperationPrepared* prepared_a = asked.Find<OperationPrepared>();
  const OperationPrepared* prepared_b = changed.Find<OperationPrepared>();
  if (prepared_b == nullptr || prepared_b->operation_id != operation_id) {
    return "setup: the mutated call is not the same operation: " + changed.Text();
  }
  if (changed.names == "WorkflowStarted OperationPrepared OperationRejected") {
    const OperationRejected* rejected = changed.Find<OperationRejected>();
    if (rejected->code != "invalid_input") {
      return "the mutated input was rejected with '" + rejected->code + "', not invalid_input";
    }
    // Nothing can consume a grant; what is journaled (and would be hashed) is still checked.
    const bool same = prepared_b->input_json == prepared_a->input_json;
    if (secret && !same) fail("a secret field's change showed in the journaled intent");
    if (!secret && same) fail("the journaled intent did not change: " + prepared_b->input_json);
    if (broken.empty()) ++tally.refused_invalid;
    return broken;
  }
  if (changed.names != "WorkflowStarted OperationPrepared ApprovalRequested") {
    return "the mutated input was neither refused nor sent for approval: " + changed.Text();
  }
  const std::string new_hash = b.FindOperationByStep(kStep)->intent_hash;
  if (b.FindOperationByStep(kStep)->approval_id != approval_id) {
    return "setup: run B's approval id differs from run A's";
  }
  if (secret && new_hash != old_hash) fail("a secret field's change changed the intent hash");
  if (!secret && new_hash == old_hash) fail("the intent hash did not change (" + new_hash + ")");

  // 4. A's grant carried over: B's history, then A's grant (bound to A's hash), its attempt and
  //    that attempt's retryable failure; folded as at a restart, the step replayed with B's
  //    input, and the retry falls due.
  const std::string code =
      truth.retry.retryable_codes.empty() ? "rate_limited" : truth.retry.retryable_codes.front();
  AttemptOutcome failure;
  failure.kind = FailureKind::kRetryable;
  failure.code = code;
  const Batch failed = Decide(a, engine, kT0 + 1500ms, [&](Decider& d) {
    return d.AttemptFinished(operation_id, 1, failure);
  });
  if (failed.names != "AttemptFailedRetryable") {
    return "setup: a retryable failure of the first attempt gave " + failed.Text();
  }
  RunState c(kRun);
  std::vector<Event> history = changed.events;
  for (const Batch* batch : {&granted, &failed}) {
    history.insert(history.end(), batch->events.begin(), batch->events.end());
  }
  if (auto folded = c.ApplyAll(history); !folded) {
    return "folding B's history with A's grant failed: " + folded.error().message();
  }
  const TimePoint retry_at = FromMicros(c.FindOperationByStep(kStep)->due_at_us);
  const Batch retried = Decide(c, engine, retry_at, [&](Decider& d) -> Result<void> {
    RECKON_TRY(d.ApplyCommands(OneCall(tool, m.input, /*replayed=*/true)));
    return d.Due(operation_id);
  });
  if (secret) {
    const AttemptStarted* started = retried.Find<AttemptStarted>();
    if (!retried.ok || retried.names != "AttemptStarted" || started->approval_id != approval_id) {
      fail("after a secret field's change the retry did not run under the old grant: " +
           retried.Text());
    }
  } else {
    const ApprovalRequested* again = retried.Find<ApprovalRequested>();
    if (!retried.ok || retried.names != "ApprovalRequested" || again->intent_hash != new_hash ||
        again->approval_id == approval_id) {
      fail("the retry under a grant for the old intent did not ask for a new approval: " +
           retried.Text());
    }
  }

  // 5. A decision for the hash the reviewer saw reaches the changed operation.
  const Batch decided = Approve(b, engine, kT0 + 3s, approval_id, old_hash);
  if (secret) {
    if (!decided.ok || decided.names != "ApprovalGranted AttemptStarted") {
      fail("after a secret field's change the reviewed decision was refused: " + decided.Text());
    }
    if (broken.empty()) ++tally.grant_kept;
  } else {
    if (decided.ok || decided.code != Errc::kPermissionDenied || !decided.names.empty()) {
      fail("a decision for the old intent was accepted for the changed one: " + decided.Text());
    }
    if (broken.empty()) ++tally.asked_again;
  }
  return broken;
}

struct Engines {
  std::vector<ToolContract> truth = SampleContracts();
  ContractRegistry shipped;
  ContractRegistry opened;
  explicit Engines(bool mutant)
      : shipped(RegistryOf(truth, false, mutant)), opened(RegistryOf(truth, true, mutant)) {}
};

// Runs seed `seed` under both engine variants; "" if the property held, else what broke.
std::string RunSeed(std::uint64_t seed, const Engines& engines, Tally& tally) {
  const ToolContract& truth = engines.truth[seed % engines.truth.size()];
  mut::Rng rng(seed);
  const json::value input = mut::GenerateInput(truth.input_schema, rng);
  const std::vector<std::string> names = PropertyNames(truth);
  const mut::Mutation m = mut::MutateOneField(input, rng, names);
  ++tally.cases;
  ++tally.by_mutation[m.what];
  if (m.path.size() > 1) ++tally.nested;
  if (std::any_of(m.path.begin(), m.path.end(), [](const mut::PathStep& step) {
        return std::holds_alternative<std::size_t>(step);
      })) {
    ++tally.in_array;
  }
  std::string report;
  for (const auto& [variant, engine] :
       {std::pair<const char*, const ContractRegistry*>{"shipped", &engines.shipped},
        std::pair<const char*, const ContractRegistry*>{"opened", &engines.opened}}) {
    const std::string broken = CheckCase(*engine, truth, input, m, tally);
    if (!broken.empty()) report += std::string("\n  ") + variant + " schema: " + broken;
  }
  if (report.empty()) return "";
  return "seed " + std::to_string(seed) + " (tool " + truth.name + ", " + m.what + " at '" +
         mut::PathText(m.path) + "'):" + report + "\n  input:   " + json::serialize(input) +
         "\n  mutated: " + json::serialize(m.input) +
         "\n  rerun with RECKON_APPROVAL_MUTATION_SEED=" + std::to_string(seed);
}

std::uint64_t EnvNumber(const char* name, std::uint64_t fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::strtoull(value, nullptr, 10) : fallback;
}

void Print(const Tally& t) {
  std::cout << "approval mutation: " << t.cases << " cases, " << t.decided
            << " decided (shipped + opened schema): " << t.asked_again << " asked again, "
            << t.grant_kept << " secret changes kept their grant, " << t.refused_invalid
            << " refused as invalid input; secret-field changes " << t.secret << "; cases below "
            << "the top level " << t.nested << ", in an array " << t.in_array << "\n  mutations:";
  for (const auto& [what, n] : t.by_mutation) std::cout << " " << what << "=" << n << ";";
  std::cout << "\n";
}

TEST(ApprovalMutation, AnyChangedFieldNeedsANewApprovalAndASecretDoesNot) {
  const Engines engines(/*mutant=*/false);
  ASSERT_EQ(engines.truth.size(), 3u);
  std::uint64_t first = 1;
  std::uint64_t count = EnvNumber("RECKON_APPROVAL_MUTATION_CASES", 300);
  if (const std::uint64_t one = EnvNumber("RECKON_APPROVAL_MUTATION_SEED", 0); one != 0) {
    first = one;
    count = 1;
  }
  Tally tally;
  for (std::uint64_t seed = first; seed < first + count; ++seed) {
    const std::string broken = RunSeed(seed, engines, tally);
    if (!broken.empty()) {
      ADD_FAILURE() << broken;
      break;
    }
  }
  Print(tally);
  EXPECT_GT(tally.asked_again, 0);
  if (count >= 100) {
    EXPECT_GT(tally.grant_kept, 0) << "no case changed a secret field";
    EXPECT_GT(tally.refused_invalid, 0);
  }
}

// The property bites: an engine that leaves one non-secret field of each tool out of the
// intent hash lets a grant for the old intent serve a changed one. For every tool, within the
// first 60 seeds, each check of the decision path must catch it: the replay with a changed
// input that was accepted (step 2), the retry that ran under the old grant (step 4) and the
// decision for the old hash that was accepted (step 5). Measured seeds: docs/TESTING.md.
TEST(ApprovalMutation, AnEngineThatIgnoresAFieldIsCaught) {
  const Engines engines(/*mutant=*/true);
  const std::vector<std::string> checks = {"replay with the changed input was accepted",
                                           "did not ask for a new approval",
                                           "accepted for the changed one"};
  std::map<std::string, std::map<std::string, std::uint64_t>> first_caught;  // tool, check
  Tally tally;
  int caught = 0;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    const std::string broken = RunSeed(seed, engines, tally);
    if (broken.empty()) continue;
    ++caught;
    const std::string& tool = engines.truth[seed % engines.truth.size()].name;
    bool news = false;
    for (const std::string& check : checks) {
      if (broken.find(check) != std::string::npos && !first_caught[tool].contains(check)) {
        first_caught[tool][check] = seed;
        news = true;
      }
    }
    if (news) std::cout << "mutant caught: " << broken << "\n";
  }
  std::cout << "mutant: " << caught << " of 60 seeds caught it\n";
  for (const ToolContract& c : engines.truth) {
    for (const std::string& check : checks) {
      EXPECT_TRUE(first_caught[c.name].contains(check))
          << "ignoring '" << kIgnoredByMutant.at(c.name) << "' of " << c.name
          << " went unnoticed by the check '" << check << "'";
    }
  }
}

}  // namespace
}  // namespace reckon
