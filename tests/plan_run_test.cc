// Agent plans end to end, in both modes, with real processes on 127.0.0.1: a payments provider
// that drops replies; embedded (`refund-agent plan FILE`: the sample hosts the engine and its
// tools through host/plan_runner.h; and `reckon plan run --tools samples/refund/tools.json`,
// no sample code) and `reckon plan run` on a server with two refund-workers or two
// `reckon worker --tools` (approvals sent with `reckon approve`). Each run must
// complete, and the ledger must hold exactly one refund per refund step, under its operation id.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <chrono>
#include <fstream>
#include <limits>
#include <regex>
#include <set>
#include <sstream>
#include <filesystem>
#include <optional>
#include <thread>

#include "reckon/engine/outbox_message.h"
#include "reckon/storage/sqlite/sqlite_journal.h"
#include "reckon/storage/sqlite/sqlite_outbox_store.h"
#include "reckon/storage/journal.h"
#include "reckon/host/testing/journal_view.h"
#include "tests/refund_crash_audit.h"
#include "tests/support/crash_support.h"
#include "tests/support/role_tokens.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace reckon::testing {
namespace {

using namespace std::chrono_literals;
namespace json = boost::json;

Result<ListeningProcess> StartProvider(const TempDir& dir) {
  SubprocessOptions o;
  o.args = {"--port", "0", "--ledger", dir.File("ledger.db"), "--seed", "1",
            "--drop-reply-rate", "0.5"};
  o.stderr_path = dir.File("provider.log");
  return StartListening(RECKON_PAYMENTS_PROVIDER, std::move(o));
}

// Runs `program args...`, returning its exit status and stdout.
std::pair<ExitStatus, std::string> RunProgram(const char* program, const TempDir& dir,
                                              std::vector<std::string> args,
                                              std::chrono::seconds timeout = 60s) {
  SubprocessOptions o;
  o.args = std::move(args);
  o.stderr_path = dir.File("cli.log");
  auto cli = Subprocess::Start(program, std::move(o));
  EXPECT_TRUE(cli) << cli.error().ToString();
  auto out = cli.value().ReadAll(timeout);
  auto status = cli.value().WaitFor(5s);
  EXPECT_TRUE(status) << program << " did not exit";
  return {status ? status.value() : ExitStatus{}, out ? out.value() : std::string()};
}

std::pair<ExitStatus, std::string> Reckon(const TempDir& dir, std::vector<std::string> args,
                                          std::chrono::seconds timeout = 60s) {
  return RunProgram(RECKON_CLI_PATH, dir, std::move(args), timeout);
}

void ExpectOneRefundPerRefundStep(std::uint16_t provider_port, const std::string& output,
                                  std::size_t refunds) {
  auto ledger = FetchRefunds(provider_port);
  ASSERT_TRUE(ledger) << ledger.error().ToString();
  EXPECT_EQ(ledger.value().size(), refunds) << output;
  std::map<std::string, int> per_key;
  for (const LedgerRefund& r : ledger.value()) ++per_key[r.idempotency_key];
  for (const auto& [key, n] : per_key) EXPECT_EQ(n, 1) << "key " << key;
}

const std::string kPlan = std::string(RECKON_SOURCE_DIR) + "/samples/plans/refund_two.json";

TEST(PlanRunTest, EmbeddedRunsTheSamplePlanToTheEnd) {
  TempDir dir;
  auto provider = StartProvider(dir);
  ASSERT_TRUE(provider) << provider.error().ToString();
  const std::string url = "http://127.0.0.1:" + std::to_string(provider.value().port);
  auto [status, out] = RunProgram(RECKON_REFUND_AGENT, dir,
                                  {"plan", kPlan, "--provider", url, "--journal",
                                   dir.File("plans.db"), "--approve-all"});
  EXPECT_TRUE(status.Succeeded()) << status.ToString() << "\n" << out;
  EXPECT_NE(out.find("plan refund-pay-4-and-5: completed"), std::string::npos) << out;
  ExpectOneRefundPerRefundStep(provider.value().port, out, 2);
  // Running it again resumes nothing and repeats nothing.
  auto [again, out2] = RunProgram(RECKON_REFUND_AGENT, dir,
                                  {"plan", kPlan, "--provider", url, "--journal",
                                   dir.File("plans.db"), "--approve-all"});
  EXPECT_TRUE(again.Succeeded()) << out2;
  EXPECT_NE(out2.find("plan refund-pay-4-and-5: completed"), std::string::npos) << out2;
  ExpectOneRefundPerRefundStep(provider.value().port, out2, 2);
}

// A plan that refunds, then publishes through the outbox: the message is journaled once, with
// the refund's id in its payload, under the id derived from the plan id and step id, however
// often the plan runs.
TEST(PlanRunTest, EmbeddedPublishStepPutsOneMessageInTheOutbox) {
  TempDir dir;
  auto provider = StartProvider(dir);
  ASSERT_TRUE(provider) << provider.error().ToString();
  const std::string url = "http://127.0.0.1:" + std::to_string(provider.value().port);
  const std::string plan = std::string(RECKON_SOURCE_DIR) + "/samples/plans/refund_notify.json";
  const std::vector<std::string> args = {"plan", plan, "--provider", url, "--journal",
                                         dir.File("plans.db"), "--approve-all"};
  for (int run = 0; run < 2; ++run) {
    auto [status, out] = RunProgram(RECKON_REFUND_AGENT, dir, args);
    ASSERT_TRUE(status.Succeeded()) << status.ToString() << "\n" << out;
    EXPECT_NE(out.find("plan refund-pay-6-notify: completed"), std::string::npos) << out;
    EXPECT_NE(out.find("publish refunds.sent"), std::string::npos) << out;
    if (run == 0) {
      EXPECT_NE(out.find("notify: published to refunds.sent (in the outbox)"), std::string::npos) << out;
    }
  }
  ExpectOneRefundPerRefundStep(provider.value().port, "", 1);
  auto [listed, table] = Reckon(dir, {"outbox", "list", dir.File("plans.db")});
  ASSERT_TRUE(listed.Succeeded()) << listed.ToString() << "\n" << table;
  EXPECT_NE(table.find("refunds.sent"), std::string::npos) << table;
  auto ledger = FetchRefunds(provider.value().port);
  ASSERT_TRUE(ledger);
  ASSERT_EQ(ledger.value().size(), 1u);
  auto store = storage::SqliteOutboxStore::Open(dir.File("plans.db"), nullptr);
  ASSERT_TRUE(store) << store.error().ToString();
  auto rows = store.value()->ListDue(std::numeric_limits<std::int64_t>::max(), 10);
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows.value().size(), 1u);
  {
    auto journal = storage::OpenSqliteJournal(dir.File("plans.db"));
    ASSERT_TRUE(journal) << journal.error().ToString();
    auto scope = LatestIdScope(*journal.value(), "refund-pay-6-notify");
    ASSERT_TRUE(scope) << scope.error().ToString();
    EXPECT_EQ(rows.value()[0].message_id, MessageIdFor(scope.value(), "notify"));
  }
  EXPECT_NE(rows.value()[0].payload.find("\"refund_id\":\"" + ledger.value()[0].refund_id + "\""),
            std::string::npos)
      << rows.value()[0].payload;
  std::size_t messages = 0;
  for (std::size_t at = table.find("msg_"); at != std::string::npos; at = table.find("msg_", at + 1)) {
    ++messages;
  }
  EXPECT_EQ(messages, 1u) << table;
}

TEST(PlanRunTest, EmbeddedWithoutApprovalWaitsForAPersonThenResumes) {
  TempDir dir;
  auto provider = StartProvider(dir);
  ASSERT_TRUE(provider) << provider.error().ToString();
  const std::string url = "http://127.0.0.1:" + std::to_string(provider.value().port);
  const std::vector<std::string> args = {"plan", kPlan, "--provider", url, "--journal",
                                         dir.File("plans.db")};
  auto [waiting, out] = RunProgram(RECKON_REFUND_AGENT, dir, args);
  EXPECT_EQ(waiting.code, 3) << waiting.ToString() << "\n" << out;
  EXPECT_NE(out.find("waiting for a person"), std::string::npos) << out;
  std::vector<std::string> approve = args;
  approve.push_back("--approve-all");
  auto [done, out2] = RunProgram(RECKON_REFUND_AGENT, dir, approve);
  EXPECT_TRUE(done.Succeeded()) << done.ToString() << "\n" << out2;
  ExpectOneRefundPerRefundStep(provider.value().port, out2, 2);
}

TEST(PlanRunTest, EmbeddedRefusesAnInvalidPlanAndJournalsNothing) {
  TempDir dir;
  const std::string invalid =
      std::string(RECKON_SOURCE_DIR) + "/samples/plans/invalid/loosens_contract.json";
  auto [status, out] = RunProgram(RECKON_REFUND_AGENT, dir,
                                  {"plan", invalid, "--provider", "http://127.0.0.1:1",
                                   "--journal", dir.File("plans.db")});
  EXPECT_EQ(status.code, 2) << status.ToString() << "\n" << out;
  auto journal = storage::OpenSqliteJournal(dir.File("plans.db"));
  ASSERT_TRUE(journal) << journal.error().ToString();
  auto runs = journal.value()->ListRuns();
  ASSERT_TRUE(runs);
  EXPECT_TRUE(runs.value().empty());
}

// A `reckon server` on a free port of 127.0.0.1 with a token per role in the test's directory.
struct PlanServer {
  Subprocess process;
  std::string address;
  std::string tokens_dir;
};

std::optional<PlanServer> StartPlanServer(const TempDir& dir) {
  SubprocessOptions so;
  so.args = {"server", "--journal", dir.File("server.db"), "--listen", "127.0.0.1:0",
             "--port-file", dir.File("port"), "--quiet"};
  so.stderr_path = dir.File("server.log");
  auto server = Subprocess::Start(RECKON_CLI_PATH, so);
  EXPECT_TRUE(server) << server.error().ToString();
  if (!server) return std::nullopt;
  int port = 0;
  for (int i = 0; i < 400 && port == 0; ++i) {
    std::ifstream file(dir.File("port"));
    if (!(file >> port)) std::this_thread::sleep_for(10ms);
  }
  EXPECT_NE(port, 0);
  if (port == 0) return std::nullopt;
  const std::string address = "127.0.0.1:" + std::to_string(port);
  auto tokens = IssueRoleTokens(RECKON_CLI_PATH, address, dir.File("server.db.admin-token"),
                                dir.path().string());
  EXPECT_TRUE(tokens) << tokens.error().ToString();
  if (!tokens) return std::nullopt;
  return PlanServer{std::move(server).value(), address, dir.path().string()};
}

// `reckon plan run PLAN --server ...`, answering each approval it prints with `reckon approve`
// as a person would from another terminal. Returns the exit status, the transcript and how
// many operations were approved.
struct ServerPlanRun {
  std::optional<ExitStatus> status;
  std::string transcript;
  std::size_t approved = 0;
};

ServerPlanRun RunPlanOnServerApproving(const TempDir& dir, const PlanServer& server,
                                       const std::string& plan_file) {
  ServerPlanRun result;
  SubprocessOptions ro;
  ro.args = {"plan", "run", plan_file, "--server", server.address, "--token-file",
             RoleTokenFile(server.tokens_dir, "operator")};
  ro.stderr_path = dir.File("run.log");
  // Workers may still be registering: the server refuses a plan no worker can run yet.
  std::optional<Subprocess> run;
  for (int attempt = 0; attempt < 50 && !run; ++attempt) {
    auto started = Subprocess::Start(RECKON_CLI_PATH, ro);
    EXPECT_TRUE(started);
    if (!started) return result;
    auto first = started.value().ReadLine(10s);
    auto second = started.value().ReadLine(3s);
    if (second) {
      result.transcript += first.value() + "\n" + second.value() + "\n";
      run.emplace(std::move(started).value());
    } else {
      (void)started.value().Wait();
      std::this_thread::sleep_for(100ms);
    }
  }
  EXPECT_TRUE(run) << "the plan never started";
  if (!run) return result;
  const std::regex approve("reckon approve (\\S+) --operation (\\S+) --fingerprint (\\S+)");
  std::set<std::string> approved;
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline) {
    auto line = run->ReadLine(1s);
    if (!line) {
      if (line.error().code() == Errc::kFailedPrecondition) break;  // output closed
      continue;
    }
    result.transcript += line.value() + "\n";
    std::smatch m;
    if (std::regex_search(line.value(), m, approve) && !approved.count(m[2])) {
      approved.insert(m[2]);
      auto [status, out] = Reckon(dir, {"approve", m[1], "--operation", m[2], "--fingerprint",
                                        m[3], "--server", server.address, "--token-file",
                                        RoleTokenFile(server.tokens_dir, "approver")});
      EXPECT_TRUE(status.Succeeded()) << out;
    }
  }
  auto ended = run->WaitFor(10s);
  if (ended) result.status = ended.value();
  result.approved = approved.size();
  return result;
}

TEST(PlanRunTest, OnAServerWithTwoWorkersAndApprovalsFromTheCli) {
  TempDir dir;
  auto provider = StartProvider(dir);
  ASSERT_TRUE(provider) << provider.error().ToString();
  const std::string url = "http://127.0.0.1:" + std::to_string(provider.value().port);
  std::optional<PlanServer> server = StartPlanServer(dir);
  ASSERT_TRUE(server);
  std::vector<Subprocess> workers;
  for (const char* id : {"w1", "w2"}) {
    SubprocessOptions wo;
    wo.args = {"--server", server->address, "--provider", url, "--id", id};
    wo.stderr_path = dir.File(std::string(id) + ".log");
    wo.env.emplace_back("RECKON_TOKEN_FILE", RoleTokenFile(server->tokens_dir, "worker"));
    auto worker = Subprocess::Start(RECKON_REFUND_WORKER, wo);
    ASSERT_TRUE(worker) << worker.error().ToString();
    workers.push_back(std::move(worker).value());
  }
  ServerPlanRun run = RunPlanOnServerApproving(dir, *server, kPlan);
  ASSERT_TRUE(run.status) << run.transcript;
  EXPECT_TRUE(run.status->Succeeded()) << run.status->ToString() << "\n" << run.transcript;
  EXPECT_NE(run.transcript.find("plan refund-pay-4-and-5: completed"), std::string::npos)
      << run.transcript;
  EXPECT_EQ(run.approved, 2u) << run.transcript;
  ExpectOneRefundPerRefundStep(provider.value().port, run.transcript, 2);
}

// --- the refund tools as a tools file (samples/refund/tools.json), no sample code ----------

const std::string kToolsFile = std::string(RECKON_SOURCE_DIR) + "/samples/refund/tools.json";
constexpr char kCardToken[] = "tok_canary_plan_run_31337";

std::vector<std::pair<std::string, std::string>> ToolsEnv(std::uint16_t provider_port) {
  return {{"PAYMENTS_URL", "http://127.0.0.1:" + std::to_string(provider_port)},
          {"REFUND_CARD_TOKEN", kCardToken}};
}

std::pair<ExitStatus, std::string> ReckonWithEnv(const TempDir& dir, std::vector<std::string> args,
                                                 std::vector<std::pair<std::string, std::string>> env) {
  SubprocessOptions o;
  o.args = std::move(args);
  o.env = std::move(env);
  o.stderr_path = dir.File("cli.log");
  auto cli = Subprocess::Start(RECKON_CLI_PATH, std::move(o));
  EXPECT_TRUE(cli) << cli.error().ToString();
  auto out = cli.value().ReadAll(60s);
  auto status = cli.value().WaitFor(5s);
  EXPECT_TRUE(status) << "reckon did not exit";
  return {status ? status.value() : ExitStatus{}, out ? out.value() : std::string()};
}

std::string FileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Embedded, with a provider that drops half the replies of committed refunds, rate-limits the
// first request and refuses some with 503 before committing: the run waits for a person until
// --approve-all, then every refund step ends committed, once, and the card token (a secret of
// the tools file) reaches no journal file.
TEST(PlanRunTest, EmbeddedOnTheToolsFileRunsTheSamplePlanToTheEnd) {
  TempDir dir;
  SubprocessOptions po;
  po.args = {"--port", "0", "--ledger", dir.File("ledger.db"), "--seed", "3",
             "--drop-reply-rate", "0.5", "--rate-limit-first", "1",
             "--fail-before-commit-rate", "0.3"};
  po.stderr_path = dir.File("provider.log");
  auto provider = StartListening(RECKON_PAYMENTS_PROVIDER, std::move(po));
  ASSERT_TRUE(provider) << provider.error().ToString();
  std::vector<std::string> args = {"plan", "run", kPlan, "--tools", kToolsFile, "--journal",
                                   dir.File("plans.db")};
  // Without --approve-all the first refund waits for a person: exit 3.
  auto [waiting, waiting_out] = ReckonWithEnv(dir, args, ToolsEnv(provider.value().port));
  EXPECT_EQ(waiting.code, 3) << waiting.ToString() << "\n" << waiting_out;
  EXPECT_NE(waiting_out.find("waiting for a person"), std::string::npos) << waiting_out;
  args.push_back("--approve-all");
  auto [status, out] = ReckonWithEnv(dir, args, ToolsEnv(provider.value().port));
  EXPECT_TRUE(status.Succeeded()) << status.ToString() << "\n" << out << FileText(dir.File("cli.log"));
  EXPECT_NE(out.find("plan refund-pay-4-and-5: completed"), std::string::npos) << out;
  EXPECT_NE(out.find("rate_limited"), std::string::npos) << "the 429 was not retried:\n" << out;
  ExpectOneRefundPerRefundStep(provider.value().port, out, 2);
  // Again: nothing is repeated.
  auto [again, out2] = ReckonWithEnv(dir, args, ToolsEnv(provider.value().port));
  EXPECT_TRUE(again.Succeeded()) << out2;
  ExpectOneRefundPerRefundStep(provider.value().port, out2, 2);
  for (const char* file : {"plans.db", "plans.db-wal"}) {
    EXPECT_EQ(FileText(dir.File(file)).find(kCardToken), std::string::npos) << file;
  }
}

// A bad tools file: every problem on stderr, exit 2, and nothing journaled or connected.
TEST(PlanRunTest, ABadToolsFileStopsPlanRunAndWorkerBeforeAnythingStarts) {
  TempDir dir;
  {
    std::ofstream bad(dir.File("bad.json"));
    bad << R"({"tools": [{"contract": {"name": "t", "side_effect": "non_repeatable_write",
        "input_schema": {"type": "object"}}, "request": {"method": "POST", "url": "{env.NOPE}/x"},
        "outcomes": [{"status": [200], "means": "success"}]}]})";
  }
  auto [status, out] = ReckonWithEnv(dir, {"plan", "run", kPlan, "--tools", dir.File("bad.json"),
                                           "--journal", dir.File("plans.db")}, {});
  EXPECT_EQ(status.code, 2) << status.ToString() << "\n" << out;
  const std::string err = FileText(dir.File("cli.log"));
  EXPECT_NE(err.find("tool 't' (tools[0]): request.url: {env.NOPE}"), std::string::npos) << err;
  EXPECT_NE(err.find("tool 't' (tools[0]): contract:"), std::string::npos) << err;
  EXPECT_FALSE(std::filesystem::exists(dir.File("plans.db")));
  auto [worker, wout] = ReckonWithEnv(dir, {"worker", "--server", "127.0.0.1:1", "--tools",
                                            dir.File("bad.json")}, {});
  EXPECT_EQ(worker.code, 2) << worker.ToString() << "\n" << wout;
  EXPECT_NE(FileText(dir.File("cli.log")).find("request.url: {env.NOPE}"), std::string::npos);
}

// `reckon worker --tools samples/refund/tools.json` on a `reckon server`, and `reckon plan run`
// there: the same plan, the same single refund per step.
TEST(PlanRunTest, OnAServerWithReckonWorkerOnTheToolsFile) {
  TempDir dir;
  auto provider = StartProvider(dir);
  ASSERT_TRUE(provider) << provider.error().ToString();
  std::optional<PlanServer> server = StartPlanServer(dir);
  ASSERT_TRUE(server);
  std::vector<Subprocess> workers;
  for (const char* id : {"hw1", "hw2"}) {
    SubprocessOptions wo;
    wo.args = {"worker", "--server", server->address, "--tools", kToolsFile, "--id", id};
    wo.stderr_path = dir.File(std::string(id) + ".log");
    wo.env = ToolsEnv(provider.value().port);
    wo.env.emplace_back("RECKON_TOKEN_FILE", RoleTokenFile(server->tokens_dir, "worker"));
    auto worker = Subprocess::Start(RECKON_CLI_PATH, wo);
    ASSERT_TRUE(worker) << worker.error().ToString();
    workers.push_back(std::move(worker).value());
  }
  ServerPlanRun run = RunPlanOnServerApproving(dir, *server, kPlan);
  ASSERT_TRUE(run.status) << run.transcript << FileText(dir.File("hw1.log"));
  EXPECT_TRUE(run.status->Succeeded()) << run.status->ToString() << "\n" << run.transcript;
  EXPECT_NE(run.transcript.find("plan refund-pay-4-and-5: completed"), std::string::npos)
      << run.transcript;
  EXPECT_EQ(run.approved, 2u) << run.transcript;
  ExpectOneRefundPerRefundStep(provider.value().port, run.transcript, 2);
  for (Subprocess& worker : workers) {
    auto stopped = worker.Terminate(5s);
    ASSERT_TRUE(stopped) << stopped.error().ToString();
    EXPECT_TRUE(stopped.value().Succeeded()) << stopped.value().ToString();
  }
}

// Asynchronous completion through a tools file: send_refund's contract declares a completion
// deadline and the file maps 201 to "accepted". On a server with `reckon worker`, the refund
// step waits in awaiting_completion after the provider took it; `reckon complete` delivers
// the provider's report (twice: applied once), and the plan completes with the reference the
// completion gave. One refund in the ledger.
TEST(PlanRunTest, AToolsFileMayAnswerAcceptedAndTheCompletionFinishesThePlan) {
  TempDir dir;
  SubprocessOptions po;  // no faults: the 201 must arrive to be read as "accepted"
  po.args = {"--port", "0", "--ledger", dir.File("ledger.db"), "--seed", "1"};
  po.stderr_path = dir.File("provider.log");
  auto provider = StartListening(RECKON_PAYMENTS_PROVIDER, std::move(po));
  ASSERT_TRUE(provider) << provider.error().ToString();
  {
    std::ifstream in(kToolsFile);
    std::stringstream text;
    text << in.rdbuf();
    json::value doc = json::parse(text.str());
    json::object& send = doc.as_object()["tools"].as_array()[0].as_object();
    send["contract"].as_object()["completion"] = json::object{{"deadline_ms", 600000}};
    send["outcomes"].as_array()[0] =
        json::object{{"status", json::array{201}}, {"means", "accepted"}};
    send["outcomes"].as_array().push_back(
        json::object{{"status", json::array{200}}, {"means", "success"}});
    std::ofstream(dir.File("async_tools.json")) << json::serialize(doc);
    json::object plan{{"plan_id", "refund-async-1"},
                      {"steps", json::array{json::object{
                                    {"id", "refund"}, {"tool", "send_refund"},
                                    {"input", json::object{{"payment_id", "pay-1"},
                                                           {"amount_cents", 100},
                                                           {"reason", "duplicate charge"}}}}}}};
    std::ofstream(dir.File("async_plan.json")) << json::serialize(plan);
  }
  std::optional<PlanServer> server = StartPlanServer(dir);
  ASSERT_TRUE(server);
  SubprocessOptions wo;
  wo.args = {"worker", "--server", server->address, "--tools", dir.File("async_tools.json"),
             "--id", "async-w"};
  wo.stderr_path = dir.File("async-w.log");
  wo.env = ToolsEnv(provider.value().port);
  wo.env.emplace_back("RECKON_TOKEN_FILE", RoleTokenFile(server->tokens_dir, "worker"));
  auto worker = Subprocess::Start(RECKON_CLI_PATH, wo);
  ASSERT_TRUE(worker) << worker.error().ToString();
  const std::vector<std::string> run_args = {
      "plan", "run", dir.File("async_plan.json"), "--server", server->address, "--token-file",
      RoleTokenFile(server->tokens_dir, "operator"), "--no-wait"};
  bool started = false;
  for (int i = 0; i < 50 && !started; ++i) {  // the worker may still be registering
    started = Reckon(dir, run_args).first.Succeeded();
    if (!started) std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(started) << FileText(dir.File("cli.log"));
  // Wait until the provider has taken the refund and the operation awaits its completion.
  const std::regex awaiting("awaiting_completion[^\n]*(op_[0-9a-f]+)");
  std::string operation_id, shown;
  for (int i = 0; i < 200 && operation_id.empty(); ++i) {
    shown = Reckon(dir, {"show", "refund-async-1", "--server", server->address, "--token-file",
                         RoleTokenFile(server->tokens_dir, "reader")}).second;
    std::smatch m;
    if (std::regex_search(shown, m, awaiting)) operation_id = m[1];
    else std::this_thread::sleep_for(50ms);
  }
  ASSERT_FALSE(operation_id.empty()) << shown << FileText(dir.File("async-w.log"));
  auto ledger = FetchRefunds(provider.value().port);
  ASSERT_TRUE(ledger && ledger.value().size() == 1u);
  const std::string refund_id = ledger.value()[0].refund_id;
  for (int delivery = 0; delivery < 2; ++delivery) {  // the same webhook delivered twice
    auto [status, out] = Reckon(dir, {"complete", operation_id, "--delivery-id", "evt-1",
                                      "--succeeded", "--provider-ref", refund_id, "--output",
                                      "{\"refund_id\": \"" + refund_id + "\"}", "--workflow",
                                      "refund-async-1", "--server", server->address,
                                      "--token-file", RoleTokenFile(server->tokens_dir, "worker")});
    EXPECT_TRUE(status.Succeeded()) << status.ToString() << out << FileText(dir.File("cli.log"));
  }
  std::vector<std::string> follow = run_args;
  follow.pop_back();  // without --no-wait: follows the run to its end
  auto [done, out] = Reckon(dir, follow);
  EXPECT_TRUE(done.Succeeded()) << done.ToString() << "\n" << out << FileText(dir.File("cli.log"));
  EXPECT_NE(out.find("plan refund-async-1: completed"), std::string::npos) << out;
  EXPECT_NE(out.find("\"provider_ref\":\"" + refund_id + "\""), std::string::npos) << out;
  ExpectOneRefundPerRefundStep(provider.value().port, out, 1);
}

}  // namespace
}  // namespace reckon::testing
