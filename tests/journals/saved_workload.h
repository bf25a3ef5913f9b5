// The workload of the saved journals (tests/journals/<release>/): the tools, workflows and runs
// that make_journals writes with one release and saved_journals_test replays with every later
// one. Both sides register the same code, so a later release recovers the runs as the release
// that wrote them would have.
//
// The runs cover what the journal format holds: committed operations, a lost reply reconciled
// as committed, approvals granted and waiting, an operation waiting for a person, timers and
// signals (fired, and still waiting), a plan run with its definition hash, and an attempt left
// in flight by a crash. server.db also holds the contracts table as server mode writes it.
//
// Plain functions and constants; nothing here keeps state.
#pragma once

#include <boost/json/value.hpp>

#include <string>
#include <vector>

#include "reckon/base/error.h"
#include "reckon/contract/contract.h"
#include "reckon/engine/operation_state.h"
#include "reckon/testkit/fake_provider.h"
#include "reckon/worker/tool.h"
#include "reckon/worker/workflow_registry.h"

namespace reckon::testing::saved {

// The journal files of one release.
inline constexpr char kEmbeddedJournal[] = "embedded.db";
inline constexpr char kServerJournal[] = "server.db";

// Workflow ids of embedded.db.
inline constexpr char kCheckout[] = "checkout-1";          // completed; charge's reply was lost
inline constexpr char kPayoutGranted[] = "payout-granted";  // completed after a grant
inline constexpr char kPayoutWaiting[] = "payout-waiting";  // awaits an approval
inline constexpr char kTransferParked[] = "transfer-parked";  // needs a person
inline constexpr char kNapDone[] = "nap-done";        // slept, got its signal, completed
inline constexpr char kNapLong[] = "nap-long";        // waits for a timer decades away
inline constexpr char kNapSignal[] = "nap-signal";    // slept, waits for its signal
inline constexpr char kPlan[] = "plan-1";             // a plan run, completed
inline constexpr char kMidFlight[] = "mid-flight";    // its charge was in flight at a crash

// Workflow types besides call_once (host/testing/test_workflows.h) and plan.
inline constexpr char kCheckoutType[] = "checkout";  // reserve then charge
inline constexpr char kNapType[] = "nap";            // input {"sleep_ms"}: sleep, then wait for "go"

// Tools: reserve (idempotent), charge (non-repeatable, reconciled by lookup), payout
// (non-repeatable, approval over 10000 cents), transfer (non-repeatable, a person reconciles).
std::vector<ToolContract> Contracts();
// Registers a testkit::ProviderTool over `provider` for each of Contracts().
Result<void> RegisterTools(ToolRegistry& tools, testkit::FakeProvider& provider);
// Registers checkout, nap and the plan workflow (call_once is the harness's).
Result<void> RegisterWorkflows(WorkflowRegistry& workflows);

// The plan of kPlan: reserve a, then reserve b with a's reference as its memo.
boost::json::value PlanJson();
boost::json::value NapInput(std::int64_t sleep_ms);
inline constexpr std::int64_t kDecadesMs = 50LL * 365 * 24 * 3600 * 1000;

}  // namespace reckon::testing::saved
