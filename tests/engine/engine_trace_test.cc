// Secrets: a contract's secret fields reach the tool, and nothing else. Neither the effect
// trace (log lines, JSON lines, TraceLinesFor) nor any byte of the SQLite journal holds them.
#include <gtest/gtest.h>

#include <boost/json/object.hpp>
#include <spdlog/logger.h>
#include <spdlog/sinks/ostream_sink.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "reckon/telemetry/jsonl_trace_sink.h"
#include "reckon/telemetry/log_trace_sink.h"
#include "reckon/telemetry/trace_lines.h"
#include "reckon/storage/testing/test_backend.h"
#include "reckon/engine/run_state.h"
#include "reckon/host/testing/engine_harness.h"
#include "reckon/testkit/gtest.h"
#include "reckon/testkit/fake_provider.h"
#include "reckon/host/testing/fast_contracts.h"
#include "reckon/host/testing/journal_view.h"

namespace reckon {
namespace {

using namespace std::chrono_literals;
using namespace reckon::testing;
using namespace reckon::storage;
namespace json = boost::json;

constexpr char kRun[] = "card-payout-1";
constexpr char kSecret[] = "tok_SECRET_4242_q7ZxWv";

// The card token comes from the worker's vault, not from the workflow input (which is
// journaled as is), and goes into the payout's secret field.
Task<WorkflowOutcome> PayWithCard(WorkflowContext& ctx, json::value, const std::string* vault) {
  auto pay = ctx.Call("send_payout", FastInput("acct-3", 25000, *vault));
  CallResult paid = co_await pay;
  if (!paid) co_return paid.error();
  co_return json::object{{"payout", paid.value().provider_ref}};
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

TEST(EffectTraceTest, NoSecretReachesTheTraceOrTheJournal) {
  testkit::FakeProvider provider(/*dedup=*/false);
  // Lost reply, reconciliation, and an approval on the way: many kinds of lines and events.
  provider.Script("send_payout", {testkit::Step{testkit::Behaviour::kCommitLoseReply}});
  EngineHarness h;
  ToolContract contract = FastContract("send_payout", SideEffect::kNonRepeatableWrite);
  contract.approval = {.kind = ApprovalKind::kWhen,
                       .when = {{"amount_cents", CompareOp::kGreater, 10000}},
                       .grant_ttl = 3600s};
  RECKON_ASSERT_OK(h.tools().Register(testkit::ProviderTool(contract, provider)));
  const std::string vault = kSecret;
  const std::string* token = &vault;
  RECKON_ASSERT_OK(h.workflows().Register("pay", [token](WorkflowContext& ctx, json::value in) {
    return PayWithCard(ctx, std::move(in), token);
  }));

  std::ostringstream log;
  auto logger = std::make_shared<spdlog::logger>(
      "trace", std::make_shared<spdlog::sinks::ostream_sink_st>(log));
  const std::string jsonl = h.dir().File("trace.jsonl");
  auto file_sink = JsonlTraceSink::Open(jsonl);
  RECKON_ASSERT_OK(file_sink);
  LogTraceSink log_sink(logger);
  TraceFanOut trace;
  trace.Add(log_sink);
  trace.Add(*file_sink.value());
  h.set_trace(&trace);

  h.Boot();
  RECKON_ASSERT_OK(h.Start(kRun, "pay", json::object{{"customer", "c-17"}}));
  ASSERT_TRUE(h.RunUntilState(kRun, "send_payout#1", OperationState::kAwaitingApproval));
  const OperationRecord op = *h.Operation(kRun, "send_payout#1");
  RECKON_ASSERT_OK(h.Decide(kRun, ApprovalDecision{op.approval_id, "", op.intent_hash, true,
                                                   "alice@example.com", ""}));
  ASSERT_TRUE(h.RunUntilSettled(kRun));
  EXPECT_EQ(h.Describe(kRun)->status, RunStatus::kCompleted);
  h.Shutdown();
  file_sink.value().reset();  // flushes and closes the JSON-lines file

  // The secret did reach the tool: the checks below are not vacuous.
  ASSERT_EQ(provider.calls().size(), 1u);
  EXPECT_EQ(provider.calls()[0].input.as_object().at("card_token").as_string(), kSecret);

  const std::string lines = ReadFile(jsonl);
  EXPECT_NE(lines.find("operation.reconciled"), std::string::npos);
  EXPECT_NE(lines.find("approval.granted"), std::string::npos);
  EXPECT_EQ(lines.find(kSecret), std::string::npos);
  EXPECT_NE(log.str().find("operation.attempted"), std::string::npos);
  EXPECT_EQ(log.str().find(kSecret), std::string::npos);

  const std::vector<Event> events = h.Events(kRun);
  RunState state(storage::RunRef{kRun, ""});
  RECKON_ASSERT_OK(state.ApplyAll(events));
  const auto trace_lines = TraceLinesFor(state, events);
  EXPECT_GT(trace_lines.size(), 8u);
  for (const TraceLine& line : trace_lines) {
    for (const auto& [key, value] : line.attributes) {
      EXPECT_EQ(value.find(kSecret), std::string::npos) << line.name << " " << key;
    }
  }
  const auto prepared = BodiesOf<OperationPrepared>(events);
  ASSERT_EQ(prepared.size(), 1u);
  EXPECT_EQ(prepared[0].input_json.find("card_token"), std::string::npos);

  // Every run and event the journal gives back, on any backend (the scan sees what was
  // journaled: the customer of the input).
  EXPECT_FALSE(JournalEntriesHolding(h.journal(), "c-17").empty());
  EXPECT_EQ(JournalEntriesHolding(h.journal(), kSecret), std::vector<std::string>());
  // On SQLite, every byte of the journal: the database and whatever WAL or shared-memory file
  // it left. (PostgreSQL's files belong to the server, shared by every test's database.)
  if (storage::TestOnPostgres()) return;
  int journal_files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(h.dir().path())) {
    if (entry.path().filename().string().rfind("journal.db", 0) != 0) continue;
    ++journal_files;
    EXPECT_EQ(ReadFile(entry.path()).find(kSecret), std::string::npos) << entry.path();
  }
  EXPECT_GE(journal_files, 1);
}

}  // namespace
}  // namespace reckon
