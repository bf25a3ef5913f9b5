// The secret canary, with the real processes. Card tokens come from the worker's side only:
// the refund sample's vault ("tok_secret_...", samples/refund/card_vault.cc; its C++ send_refund
// names the token to its worker with ToolCallContext::KeepSecret) or the tools file's secrets
// (samples/refund/tools.json's card_token, under `reckon worker --tools` or in-process). The
// payments provider builds its refund ids from the card token it is sent
// (--refund-id-from-card: "re_<token>_<seq>") and drops half its replies, so each refund's
// reference embeds the secret, on the normal path and in what the lookup finds after a lost
// reply. A client also tries to slip card tokens in through a workflow input, an agent plan and
// `reckon plan run`. Afterwards no card token is anywhere:
//   server mode (`reckon server --http`, a refund-worker or a `reckon worker --tools`): the
//     journal, its WAL, the trace, the server's and the worker's log, every CLI command (show,
//     history, trace, list; text and JSON) and the HTTP API (a run, its history, its trace);
//   embedded mode (EmbeddedHost running an agent plan): the journal and its WAL while the host
//     holds them, the effect trace (JSON lines and log lines) and the plan's result.
// Each test also sees the echo ("re_[secret]_" in the references) and both paths (a commit by
// the attempt and one by reconciliation), so the search cannot pass for want of a leak to find.
#include <gtest/gtest.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "reckon/plan/plan.h"
#include "reckon/telemetry/jsonl_trace_sink.h"
#include "reckon/telemetry/log_trace_sink.h"
#include "reckon/tools/http/http_tool.h"
#include "reckon/tools/http/http_tools_file.h"
#include "reckon/host/embedded_host.h"
#include "reckon/host/plan_runner.h"
#include "reckon/worker/plan_workflow.h"
#include "samples/refund/refund_tools.h"
#include "tests/support/crash_support.h"
#include "tests/support/reckon_server.h"

namespace reckon::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using namespace std::chrono_literals;

// Every card token of the sample's vault starts with this (samples/refund/card_vault.cc), and
// so do the tools file's and the canaries a client tries to send.
constexpr char kTokenPrefix[] = "tok_secret_";
constexpr char kClientCanary[] = "tok_secret_client_canary_8813";
constexpr char kToolsFileToken[] = "tok_secret_tools_file_canary_5521";
const std::string kToolsFile = std::string(RECKON_SOURCE_DIR) + "/samples/refund/tools.json";
// The provider's fault sequence for this seed drops some replies of new refunds and not others.
constexpr char kProviderSeed[] = "5";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Where `needle` is in `text`, with some context, for a failure message; empty when absent.
std::string Around(const std::string& text, const std::string& needle) {
  const std::size_t at = text.find(needle);
  if (at == std::string::npos) return "";
  const std::size_t from = at > 200 ? at - 200 : 0;
  return text.substr(from, 400);
}

// The payments provider that echoes card tokens in its refund ids and drops half its replies.
Result<ListeningProcess> StartEchoingProvider(const TempDir& dir) {
  SubprocessOptions o;
  o.args = {"--port", "0", "--ledger", dir.File("ledger.db"), "--seed", kProviderSeed,
            "--refund-id-from-card", "--drop-reply-rate", "0.5"};
  o.stderr_path = dir.File("provider.log");
  return StartListening(RECKON_PAYMENTS_PROVIDER, std::move(o));
}

std::string ProviderUrl(const ListeningProcess& provider) {
  return "http://127.0.0.1:" + std::to_string(provider.port);
}

// A plan of `n` refunds of 100 cents (no approval needed), one per payment, all at once.
std::string RefundPlan(const std::string& plan_id, int n) {
  json::array steps;
  for (int i = 1; i <= n; ++i) {
    steps.push_back(json::object{
        {"id", "refund" + std::to_string(i)},
        {"tool", "send_refund"},
        {"input", json::object{{"payment_id", "pay-" + std::to_string(i)},
                               {"amount_cents", 100},
                               {"reason", "duplicate"}}}});
  }
  return json::serialize(json::object{{"plan_id", plan_id}, {"steps", std::move(steps)}});
}

// How many operations each commit source settled, from effect trace lines (JSON lines).
std::map<std::string, int> CommitSources(const std::string& jsonl) {
  std::map<std::string, int> sources;
  std::istringstream lines(jsonl);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("operation.committed") == std::string::npos) continue;
    boost::system::error_code ec;
    json::value parsed = json::parse(line, ec);
    if (ec || !parsed.is_object()) continue;
    if (const json::value* source = parsed.as_object().if_contains("source")) {
      ++sources[std::string(source->as_string())];
    }
  }
  return sources;
}

// The echo happened and reached the journal redacted, and both paths were taken.
void ExpectBothPathsRedacted(const std::string& trace_jsonl) {
  const std::map<std::string, int> sources = CommitSources(trace_jsonl);
  EXPECT_GT(sources.count("attempt") ? sources.at("attempt") : 0, 0) << trace_jsonl;
  EXPECT_GT(sources.count("reconciliation") ? sources.at("reconciliation") : 0, 0)
      << trace_jsonl;
  EXPECT_NE(trace_jsonl.find("re_[secret]_"), std::string::npos) << trace_jsonl;
}

// --- server mode -------------------------------------------------------------------------------

class SecretCanaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto provider = StartEchoingProvider(dir_);
    ASSERT_TRUE(provider) << provider.error().ToString();
    provider_.emplace(std::move(provider).value());
    ReckonServerOptions options;
    options.extra_args = {"--http", "127.0.0.1:0", "--http-port-file", dir_.File("http-port")};
    auto server = ReckonServer::Start(RECKON_CLI_PATH, options);
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(server).value();
    std::ifstream port_file(dir_.File("http-port"));
    ASSERT_TRUE(port_file >> http_port_) << "the server did not write --http-port-file";
  }

  // Runs the CLI and keeps what it printed, for the canary search.
  CliRun Cli(std::vector<std::string> args) {
    CliRun run = server_->Cli(std::move(args));
    printed_ += run.out + run.err;
    return run;
  }

  // GET `target` of the HTTP API with the reader's token; keeps the body for the search.
  std::string Get(const std::string& target) {
    std::ifstream token_file(server_->TokenFile("reader"));
    std::string token;
    token_file >> token;
    asio::io_context io;
    beast::tcp_stream stream(io);
    stream.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"),
                                           static_cast<unsigned short>(http_port_)));
    http::request<http::string_body> request{http::verb::get, target, 11};
    request.set(http::field::host, "127.0.0.1");
    request.set(http::field::authorization, "Bearer " + token);
    http::write(stream, request);
    beast::flat_buffer buffer;
    http::response<http::string_body> response;
    http::read(stream, buffer, response);
    EXPECT_EQ(response.result_int(), 200u) << target << ": " << response.body();
    served_ += response.body();
    return response.body();
  }

  // Approves every operation of `id` that awaits approval; true once the run is finished.
  bool ApproveOrFinished(const std::string& id) {
    const CliRun show = Cli({"show", id, "--json"});
    if (show.code() != 0) return false;
    const json::value detail = json::parse(show.out);
    if (detail.at("status").as_string() != "running") return true;
    for (const json::value& op : detail.at("operations").as_array()) {
      if (op.at("state").as_string() != "awaiting_approval") continue;
      Cli({"approve", id, "--operation", std::string(op.at("operation_id").as_string()),
           "--fingerprint", std::string(op.at("intent_hash").as_string()), "--note", "canary-test"});
    }
    return false;
  }

  // What people read of `ids`: every CLI view and the HTTP API's.
  void ReadEverything(const std::vector<std::string>& ids) {
    for (const std::string& id : ids) {
      for (const char* command : {"show", "history", "trace"}) {
        EXPECT_EQ(Cli({command, id}).code(), 0) << command;
      }
      EXPECT_EQ(Cli({"show", id, "--json"}).code(), 0);
      EXPECT_EQ(Cli({"history", id, "--json"}).code(), 0);
      for (const char* view : {"", "/history", "/trace"}) Get("/api/v1/runs/" + id + view);
    }
    EXPECT_EQ(Cli({"list"}).code(), 0);
    EXPECT_EQ(Cli({"list", "--json"}).code(), 0);
    Get("/api/v1/runs");
    EXPECT_NE(printed_.find("OperationCommitted"), std::string::npos);
    EXPECT_NE(printed_.find("re_[secret]_"), std::string::npos) << "the CLI shows the references";
    EXPECT_NE(served_.find("re_[secret]_"), std::string::npos) << "the API shows the references";
  }

  // The files a card token must never reach.
  std::vector<std::string> Files() const {
    const std::string journal = server_->journal_path();
    return {journal, journal + "-wal", journal + "-shm", journal + ".trace.jsonl",
            server_->dir().File("server.log"), server_->dir().File("worker.log")};
  }

  std::vector<std::string> FilesHolding(const std::string& needle) const {
    std::vector<std::string> holding;
    for (const std::string& path : Files()) {
      if (std::filesystem::exists(path) && ReadFile(path).find(needle) != std::string::npos) {
        holding.push_back(path);
      }
    }
    return holding;
  }

  // Nothing printed, served or stored holds a card token, before and after a graceful stop.
  void ExpectNoCardTokenAnywhere() {
    EXPECT_EQ(printed_.find(kTokenPrefix), std::string::npos) << Around(printed_, kTokenPrefix);
    EXPECT_EQ(served_.find(kTokenPrefix), std::string::npos) << Around(served_, kTokenPrefix);
    EXPECT_EQ(FilesHolding(kTokenPrefix), std::vector<std::string>());
    const std::string trace = ReadFile(server_->journal_path() + ".trace.jsonl");
    ExpectBothPathsRedacted(trace);
    ASSERT_TRUE(server_->Stop());
    EXPECT_EQ(FilesHolding(kTokenPrefix), std::vector<std::string>());
    EXPECT_FALSE(ReadFile(server_->journal_path()).empty());
  }

  TempDir dir_;
  std::optional<ListeningProcess> provider_;
  std::unique_ptr<ReckonServer> server_;
  int http_port_ = 0;
  std::string printed_;  // everything the CLI printed
  std::string served_;   // everything the HTTP API answered
};

// The refund sample's worker: its C++ send_refund takes the token from its vault.
TEST_F(SecretCanaryTest, NoCardTokenReachesTheJournalTheTraceTheLogsTheCliOrTheHttpApi) {
  ASSERT_TRUE(server_->StartWorker(RECKON_REFUND_WORKER, "worker",
                                   {"--provider", ProviderUrl(*provider_), "--seed", "11", "--id",
                                    "refund-w1"}));
  std::vector<std::string> ids;
  for (int i = 1; i <= 5; ++i) {
    ids.push_back("refund-" + std::to_string(i));
    const CliRun started = server_->StartWorkflow(
        ids.back(), "refund",
        R"({"payment_id": "pay-)" + std::to_string(i) + R"(", "reason": "duplicate"})");
    ASSERT_EQ(started.code(), 0) << started.Describe();
  }
  for (const std::string& id : ids) {
    EXPECT_TRUE(Eventually([&] { return ApproveOrFinished(id); }, 60s)) << id;
    const CliRun show = Cli({"show", id, "--json"});
    EXPECT_EQ(json::parse(show.out).at("status").as_string(), "completed") << show.Describe();
  }

  // A client tries to hand card tokens over itself: refused, and never stored.
  const CliRun by_input = Cli({"start", "sneaky-1", "--type", "refund", "--input",
                               R"({"payment_id": "pay-1", "reason": "r", "card_token": ")" +
                                   std::string(kClientCanary) + "\"}"});
  EXPECT_EQ(by_input.code(), 2) << by_input.Describe();
  EXPECT_NE(by_input.err.find("'card_token', a secret field of tool 'send_refund'"),
            std::string::npos)
      << by_input.Describe();
  const std::string plan = server_->dir().File("sneaky-plan.json");
  std::ofstream(plan) << R"({"plan_id": "sneaky-plan", "steps": [{"id": "refund",
      "tool": "send_refund", "input": {"payment_id": "pay-2", "amount_cents": 100,
      "reason": "r", "card_token": ")" << kClientCanary << R"("}}]})";
  const CliRun by_plan = Cli({"plan", "run", plan});
  EXPECT_EQ(by_plan.code(), 2) << by_plan.Describe();
  EXPECT_NE(by_plan.err.find("secrets come from the worker's side"), std::string::npos)
      << by_plan.Describe();

  ReadEverything(ids);
  ExpectNoCardTokenAnywhere();
}

// `reckon worker --tools samples/refund/tools.json`: the token is the tools file's secret, and
// an agent plan runs the refunds (`reckon plan run` on the server).
TEST_F(SecretCanaryTest, AToolsFileWorkerKeepsItsSecretOutOfTheJournalTheLogsTheCliAndTheApi) {
  SubprocessOptions wo;
  wo.args = {"worker", "--server", server_->address(), "--tools", kToolsFile, "--id", "hw1"};
  wo.stderr_path = server_->dir().File("worker.log");
  wo.env = server_->client_env();
  wo.env.emplace_back("RECKON_TOKEN_FILE", server_->TokenFile("worker"));
  wo.env.emplace_back("PAYMENTS_URL", ProviderUrl(*provider_));
  wo.env.emplace_back("REFUND_CARD_TOKEN", kToolsFileToken);
  auto worker = Subprocess::Start(RECKON_CLI_PATH, wo);
  ASSERT_TRUE(worker) << worker.error().ToString();

  const std::string plan = server_->dir().File("refunds-plan.json");
  std::ofstream(plan) << RefundPlan("canary-plan", 5);
  // The worker may still be registering: the server refuses a plan no worker can run yet.
  EXPECT_TRUE(Eventually([&] {
    return Cli({"plan", "run", plan, "--no-wait", "--token-file",
                server_->TokenFile("operator")})
               .code() == 0;
  })) << printed_;
  EXPECT_TRUE(Eventually(
      [&] {
        const CliRun show = server_->Cli({"show", "canary-plan", "--json"});
        return show.code() == 0 && json::parse(show.out).at("status") == "completed";
      },
      60s));
  ReadEverything({"canary-plan"});
  EXPECT_EQ(printed_.find(kToolsFileToken), std::string::npos);
  ASSERT_TRUE(worker.value().Terminate(10s));
  ExpectNoCardTokenAnywhere();
}

// --- embedded mode -----------------------------------------------------------------------------

// What one embedded life running a plan left: the journal and its WAL while the host held
// them, the effect trace (JSON lines, then log lines) and the plan's result.
struct EmbeddedRun {
  std::string journal;
  std::string trace_jsonl;
  std::string trace_log;
  std::string result_json;
};

asio::awaitable<Result<PlanRunReport>> RecoverAndRun(EmbeddedHost& host, Plan plan) {
  RECKON_CO_TRY(co_await host.Recover());
  PlanRunOptions options;
  options.approve_as = "canary-approver";
  co_return co_await RunPlan(host, plan, std::move(options));
}

class SecretCanaryEmbeddedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto provider = StartEchoingProvider(dir_);
    ASSERT_TRUE(provider) << provider.error().ToString();
    provider_.emplace(std::move(provider).value());
  }

  // Runs RefundPlan on an embedded host whose tools `register_tools` registers.
  EmbeddedRun RunPlanWith(const std::function<Result<void>(ToolRegistry&)>& register_tools) {
    EmbeddedRun run;
    const std::string journal = dir_.File("journal.db");
    auto opened = EmbeddedHost::Open(journal);
    EXPECT_TRUE(opened) << opened.error().ToString();
    if (!opened) return run;
    std::unique_ptr<EmbeddedHost> host = std::move(opened).value();
    EXPECT_TRUE(RegisterPlanWorkflow(host->workflows()));
    Result<void> registered = register_tools(host->tools());
    EXPECT_TRUE(registered) << registered.error().ToString();
    auto jsonl = JsonlTraceSink::Open(dir_.File("trace.jsonl"));
    EXPECT_TRUE(jsonl);
    auto logger = spdlog::basic_logger_mt("secret-canary-trace", dir_.File("trace.log"));
    LogTraceSink log(logger);
    host->AddSink(*jsonl.value());
    host->AddSink(log);
    auto plan = ParsePlan(RefundPlan("canary-plan", 5));
    EXPECT_TRUE(plan) << plan.error().ToString();
    auto ran = host->Run(RecoverAndRun(*host, plan.value()));
    EXPECT_TRUE(ran) << ran.error().ToString();
    if (ran) {
      EXPECT_EQ(ran.value().progress.status(), storage::RunStatus::kCompleted)
          << ran.value().progress.failure();
      run.result_json = ran.value().progress.result_json();
    }
    run.journal = ReadFile(journal) + ReadFile(journal + "-wal");
    EXPECT_FALSE(ReadFile(journal + "-wal").empty());
    host.reset();
    logger->flush();
    spdlog::drop(logger->name());
    run.trace_jsonl = ReadFile(dir_.File("trace.jsonl"));
    run.trace_log = ReadFile(dir_.File("trace.log"));
    return run;
  }

  void ExpectNoCardToken(const EmbeddedRun& run) {
    EXPECT_EQ(run.journal.find(kTokenPrefix), std::string::npos)
        << "in the journal or its WAL: " << Around(run.journal, kTokenPrefix);
    EXPECT_EQ(run.trace_jsonl.find(kTokenPrefix), std::string::npos)
        << Around(run.trace_jsonl, kTokenPrefix);
    EXPECT_EQ(run.trace_log.find(kTokenPrefix), std::string::npos)
        << Around(run.trace_log, kTokenPrefix);
    EXPECT_EQ(run.result_json.find(kTokenPrefix), std::string::npos) << run.result_json;
    // The plan's result names each step's reference, redacted.
    EXPECT_NE(run.result_json.find("re_[secret]_"), std::string::npos) << run.result_json;
    EXPECT_NE(run.trace_log.find("operation.committed"), std::string::npos);
    ExpectBothPathsRedacted(run.trace_jsonl);
  }

  TempDir dir_;
  std::optional<ListeningProcess> provider_;
};

// The tools file's tools in-process: the token is the file's secret.
TEST_F(SecretCanaryEmbeddedTest, AToolsFilePlanKeepsItsSecretOutOfTheJournalTheTraceAndTheResult) {
  const std::string url = ProviderUrl(*provider_);
  auto env = [&url](const std::string& name) -> std::optional<std::string> {
    if (name == "PAYMENTS_URL") return url;
    if (name == "REFUND_CARD_TOKEN") return std::string(kToolsFileToken);
    return std::nullopt;
  };
  auto file = tools::LoadHttpToolsFile(kToolsFile, env);
  ASSERT_TRUE(file) << file.error().ToString();
  const EmbeddedRun run = RunPlanWith(
      [&](ToolRegistry& registry) { return tools::RegisterHttpTools(registry, file.value()); });
  ExpectNoCardToken(run);
}

// The refund sample's C++ tools in-process: the token comes from the vault, inside the tool.
TEST_F(SecretCanaryEmbeddedTest, AVaultToolsPlanKeepsTheCardTokenOutOfTheJournalTheTraceAndTheResult) {
  auto endpoint = samples::ParseHttpUrl(ProviderUrl(*provider_));
  ASSERT_TRUE(endpoint) << endpoint.error().ToString();
  const refund::CardVault vault(11);
  const EmbeddedRun run = RunPlanWith([&](ToolRegistry& registry) {
    return refund::RegisterRefundTools(registry, endpoint.value(), vault);
  });
  ExpectNoCardToken(run);
}

}  // namespace
}  // namespace reckon::testing
