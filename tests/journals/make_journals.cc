// make_journals OUT_DIR: writes this release's saved journals (tests/journals/saved_workload.h)
// into OUT_DIR, compacted, without -wal or -shm files. Run it once per release and commit the
// files under tests/journals/<release>/ (docs/JOURNAL_FORMAT.md, "Keeping the promise").
// It checks what it wrote and exits non-zero, naming the run, if a run did not end as the
// workload says.
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>

#include "reckon/contract/contract_json.h"
#include "reckon/plan/plan.h"
#include "reckon/storage/sqlite/sqlite.h"
#include "tests/journals/saved_workload.h"
#include "reckon/worker/plan_workflow.h"
#include "reckon/host/testing/engine_harness.h"
#include "reckon/host/testing/fast_contracts.h"
#include "reckon/host/testing/journal_view.h"
#include "reckon/host/testing/test_workflows.h"

namespace reckon::testing::saved {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

void Check(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("make_journals: " + what);
}
template <class T>
T Checked(Result<T> result, const std::string& what) {
  if (!result) throw std::runtime_error("make_journals: " + what + ": " + result.error().ToString());
  if constexpr (!std::is_void_v<T>) return std::move(result).value();
}

void Settle(EngineHarness& h, const std::string& id, const std::string& status) {
  Check(h.RunUntilSettled(id), id + " did not settle");
  const std::string actual(storage::RunStatusName(h.Describe(id)->status));
  Check(actual == status, id + " is " + actual + ", not " + status);
}

void StartCallOnce(EngineHarness& h, const std::string& id, const std::string& tool,
                   std::int64_t amount) {
  Checked(h.Start(id, kCallOnce, CallOnceInput(tool, FastInput("acct-" + id, amount), tool)),
          "start " + id);
}

void ApprovalRuns(EngineHarness& h) {
  StartCallOnce(h, kPayoutGranted, "payout", 25000);
  Check(h.RunUntilState(kPayoutGranted, "payout", OperationState::kAwaitingApproval),
        "payout-granted never asked for approval");
  const OperationRecord op = *h.Operation(kPayoutGranted, "payout");
  Checked(h.Decide(kPayoutGranted, ApprovalDecision{op.approval_id, "", op.intent_hash, true,
                                                    "alice@example.com", ""}),
          "grant payout-granted");
  Settle(h, kPayoutGranted, "completed");

  StartCallOnce(h, kPayoutWaiting, "payout", 30000);
  Check(h.RunUntilState(kPayoutWaiting, "payout", OperationState::kAwaitingApproval),
        "payout-waiting never asked for approval");
}

void TimerAndSignalRuns(EngineHarness& h) {
  Checked(h.Start(kNapDone, kNapType, NapInput(1)), "start nap-done");
  Checked(h.Start(kNapSignal, kNapType, NapInput(1)), "start nap-signal");
  Checked(h.Start(kNapLong, kNapType, NapInput(kDecadesMs)), "start nap-long");
  // Long enough for the 1 ms timers to fire; what happened is checked in the journal below.
  h.RunUntil([] { return false; }, 200ms);
  auto signalled = h.Await(h.engine().Signal(kNapDone, "go", "\"now\""));
  Check(signalled && signalled->has_value(), "signal nap-done");
  Settle(h, kNapDone, "completed");
}

void PlanRun(EngineHarness& h) {
  Plan plan = Checked(ParsePlanJson(PlanJson()), "parse the plan");
  Checked(ValidatePlan(plan, h.tools().contracts()), "validate the plan");
  auto started = h.Await(h.engine().Start(kPlan, kPlanWorkflow, PlanToJson(plan), PlanHash(plan)));
  Check(started && started->has_value(), "start plan-1");
  Settle(h, kPlan, "completed");
}

// Life 1 ends with mid-flight's charge attempt outstanding, as a killed process leaves it.
void CrashMidFlight(EngineHarness& h, testkit::FakeProvider& provider) {
  provider.Script("charge", {testkit::Step{testkit::Behaviour::kHang}});
  provider.OnCall([&h](const testkit::CallRecord& call) {
    if (call.tool == "charge") h.Crash();
  });
  StartCallOnce(h, kMidFlight, "charge", 700);
  Check(h.RunUntil([&h] { return h.crashed(); }), "mid-flight's charge never started");
  provider.OnCall(nullptr);
  h.Shutdown();
}

void CheckEmbedded(EngineHarness& h) {
  Check(EventNames(h.Events(kCheckout), OperationIdOfStep(h.Events(kCheckout), "charge#2")) ==
            "OperationPrepared AttemptStarted OutcomeUnknown ReconciliationStarted "
            "ReconciliationResult OperationCommitted",
        "checkout-1's charge was not reconciled as committed: " + EventNames(h.Events(kCheckout)));
  Check(EventNames(h.Events(kNapSignal)).find("TimerFired") != std::string::npos,
        "nap-signal's timer did not fire: " + EventNames(h.Events(kNapSignal)));
  Check(EventNames(h.Events(kNapLong)).find("TimerStarted") != std::string::npos,
        "nap-long has no timer: " + EventNames(h.Events(kNapLong)));
  const auto mid = h.Events(kMidFlight);
  Check(EventNames(mid, OperationIdOfStep(mid, "charge")) == "OperationPrepared AttemptStarted",
        "mid-flight's charge is not in flight: " + EventNames(mid));
}

void WriteEmbedded(testkit::FakeProvider& provider, EngineHarness& h) {
  Checked(RegisterTools(h.tools(), provider), "register tools");
  Checked(RegisterWorkflows(h.workflows()), "register workflows");
  h.Boot();
  provider.Script("charge", {testkit::Step{testkit::Behaviour::kCommitLoseReply}});
  Checked(h.Start(kCheckout, kCheckoutType, json::object{}), "start checkout-1");
  Settle(h, kCheckout, "completed");
  ApprovalRuns(h);
  provider.Script("transfer", {testkit::Step{testkit::Behaviour::kCommitLoseReply}});
  StartCallOnce(h, kTransferParked, "transfer", 900);
  Check(h.RunUntilState(kTransferParked, "transfer", OperationState::kNeedsHuman),
        "transfer-parked does not need a person");
  TimerAndSignalRuns(h);
  PlanRun(h);
  CrashMidFlight(h, provider);
  CheckEmbedded(h);
}

// Server mode journals the contracts its workers declare (api/server/service.h).
void WriteServer(testkit::FakeProvider& provider, EngineHarness& h) {
  Checked(RegisterTools(h.tools(), provider), "register tools");
  Checked(RegisterWorkflows(h.workflows()), "register workflows");
  for (const ToolContract& contract : Contracts()) {
    const std::string hash = Checked(ContractHash(contract), "hash " + contract.name);
    const std::int64_t now_us = std::chrono::duration_cast<std::chrono::microseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count();
    Checked(h.journal().PutContract(storage::ContractRow{
                contract.name, hash, json::serialize(ContractToJson(contract)), now_us}),
            "journal contract " + contract.name);
  }
  h.Boot();
  Checked(h.Start(kCheckout, kCheckoutType, json::object{}), "start checkout-1");
  Settle(h, kCheckout, "completed");
  h.Shutdown();
}

// A compact copy of the harness's journal (its WAL included) at `to`.
void Compact(EngineHarness& h, const std::filesystem::path& to) {
  std::filesystem::remove(to);
  auto db = Checked(storage::SqliteDb::Open(h.journal_path(), /*read_only=*/true), "open");
  Checked(db.Exec("VACUUM INTO '" + to.string() + "'"), "VACUUM INTO " + to.string());
}

}  // namespace
}  // namespace reckon::testing::saved

int main(int argc, char** argv) {
  using namespace reckon::testing;
  if (argc != 2) {
    std::cerr << "usage: make_journals OUT_DIR (e.g. tests/journals/0.1.0)\n";
    return 2;
  }
  const std::filesystem::path out = argv[1];
  try {
    std::filesystem::create_directories(out);
    {
      reckon::testkit::FakeProvider provider(/*dedup=*/false);
      EngineHarness h;
      saved::WriteEmbedded(provider, h);
      saved::Compact(h, out / saved::kEmbeddedJournal);
    }
    {
      reckon::testkit::FakeProvider provider(/*dedup=*/false);
      EngineHarness h;
      saved::WriteServer(provider, h);
      saved::Compact(h, out / saved::kServerJournal);
    }
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  std::cout << "wrote " << (out / saved::kEmbeddedJournal).string() << " and "
            << (out / saved::kServerJournal).string() << "\n";
  return 0;
}
