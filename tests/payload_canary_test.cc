// Payloads at rest (docs/SECURITY.md): real workflows carry distinctive canary strings in their
// inputs, tool inputs, tool outputs, signal payloads, results, error messages and people's
// reasons. With a payload key file, none of them (raw, JSON-escaped, or any long run of their
// letters and digits) appears in the raw bytes of the journal, its -wal file, the effect
// trace files or the server's log. The control run, without a key, finds every one of them in
// the journal, so the search can see what it looks for. Embedded mode (EmbeddedHost) and
// server mode (`reckon server --payload-key` with reckon-test-worker) both.
#include <gtest/gtest.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <boost/json.hpp>

#include <cctype>
#include <fstream>
#include <iterator>

#include "reckon/storage/crypto/aes_gcm_codec.h"
#include "reckon/storage/event_codec.h"
#include "reckon/storage/sqlite/sqlite.h"
#include "reckon/storage/sqlite/sqlite_journal.h"
#include "reckon/telemetry/jsonl_trace_sink.h"
#include "reckon/telemetry/log_trace_sink.h"
#include "reckon/host/embedded_host.h"
#include "reckon/host/testing/fast_contracts.h"
#include "tests/support/reckon_server.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace reckon::testing {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;

// Each canary holds a quote and a backslash, so its JSON form differs from its raw form.
const std::string kInput = R"(CNRYwfinputK4q"x\1)";
const std::string kToolInput = R"(CNRYtoolinputM8w"x\2)";
const std::string kSignal = R"(CNRYsignalP3z"x\3)";
const std::string kResult = R"(CNRYresultT6v"x\4)";
const std::string kToolError = R"(CNRYtoolerrorB2n"x\5)";
const std::string kWorkflowError = R"(CNRYwferrorH7c"x\6)";
const std::string kDenyReason = R"(CNRYdenyreasonJ5s"x\7)";
const std::string kCancelReason = R"(CNRYcancelG9d"x\8)";
const std::string kLateSignal = R"(CNRYlatesignalW1f"x\9)";

std::string Reversed(const std::string& s) { return std::string(s.rbegin(), s.rend()); }

struct Canary {
  std::string name;
  std::string text;
};

// The canaries of the embedded run that the journal holds when no codec is on.
std::vector<Canary> EmbeddedCanaries() {
  return {{"workflow input", kInput},      {"tool input", kToolInput},
          {"tool output", Reversed(kToolInput)}, {"signal payload", kSignal},
          {"result", kResult},             {"tool error message", kToolError},
          {"workflow error message", kWorkflowError}, {"deny reason", kDenyReason},
          {"cancel reason", kCancelReason}};
}

// What a search looks for: the raw text, its JSON-escaped form, and every run of 8 or more
// letters and digits in it (so a partial copy under another escaping is found too).
std::vector<std::string> Forms(const std::string& text) {
  const std::string quoted = json::serialize(json::string(text));
  std::vector<std::string> forms = {text, quoted.substr(1, quoted.size() - 2)};
  std::string run;
  for (char c : text + " ") {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      run += c;
    } else {
      if (run.size() >= 8) forms.push_back(run);
      run.clear();
    }
  }
  return forms;
}

bool Contains(const std::string& bytes, const std::string& text) {
  for (const std::string& form : Forms(text)) {
    if (bytes.find(form) != std::string::npos) return true;
  }
  return false;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The names of the canaries found in `bytes`.
std::vector<std::string> Found(const std::string& bytes, const std::vector<Canary>& canaries) {
  std::vector<std::string> found;
  for (const Canary& canary : canaries) {
    if (Contains(bytes, canary.text)) found.push_back(canary.name);
  }
  return found;
}

std::vector<std::string> Missing(const std::string& bytes, const std::vector<Canary>& canaries) {
  std::vector<std::string> missing;
  for (const Canary& canary : canaries) {
    if (!Contains(bytes, canary.text)) missing.push_back(canary.name);
  }
  return missing;
}

// A key file with one key per id (its bytes made from the id), mode 0600.
std::string WriteKeyFile(const TempDir& dir, const std::string& name,
                         const std::vector<std::string>& ids) {
  const std::string path = dir.File(name);
  {
    std::ofstream out(path);
    out << "# test payload keys\n";
    for (const std::string& id : ids) {
      std::string hex;
      for (int i = 0; i < 32; ++i) {
        char byte[3];
        std::snprintf(byte, sizeof byte, "%02x", (id.back() * 31 + i * 7) & 0xff);
        hex += byte;
      }
      out << id << " " << hex << "\n";
    }
  }
  ::chmod(path.c_str(), 0600);
  return path;
}

// --- embedded mode ----------------------------------------------------------------------------

Task<WorkflowOutcome> CanaryFlow(WorkflowContext& ctx, json::value input) {
  auto signal = ctx.WaitSignal(std::string("go"));
  std::string payload = co_await signal;
  json::value echo_input = input.as_object().at("tool_input");
  auto echo = ctx.Call(std::string("echo"), std::move(echo_input));
  CallResult echoed = co_await echo;
  if (!echoed) co_return echoed.error();
  json::value refuse_input = FastInput("acct-1", 1);
  auto refuse = ctx.Call(std::string("refuse"), std::move(refuse_input));
  CallResult refused = co_await refuse;  // refused, with the tool's message journaled
  co_return json::object{{"result", kResult},
                         {"signal", payload},
                         {"echo", echoed.value().output},
                         {"refused", !refused}};
}

Task<WorkflowOutcome> CanaryFail(WorkflowContext&, json::value) {
  co_return CallFailure{"rejected", kWorkflowError};
}

Task<WorkflowOutcome> CanaryApproval(WorkflowContext& ctx, json::value input) {
  json::value tool_input = input.as_object().at("tool_input");
  auto call = ctx.Call(std::string("approved_echo"), std::move(tool_input));
  CallResult result = co_await call;
  if (!result) co_return result.error();
  co_return result.value().output;
}

asio::awaitable<AttemptOutcome> Echo(json::value input, ToolCallContext) {
  const std::string memo(input.as_object().at("memo").as_string());
  co_return ToolSucceeded(json::object{{"reversed", Reversed(memo)}});
}

asio::awaitable<AttemptOutcome> Refuse(json::value, ToolCallContext) {
  co_return ToolFailed(FailureKind::kDefinitive, "card_declined", kToolError);
}

void Register(EmbeddedHost& host) {
  Tool echo{FastContract("echo", SideEffect::kReadOnly), Echo, nullptr};
  Tool refuse{FastContract("refuse", SideEffect::kIdempotentWrite), Refuse, nullptr};
  Tool approved{FastContract("approved_echo", SideEffect::kIdempotentWrite), Echo, nullptr};
  approved.contract.approval.kind = ApprovalKind::kAlways;
  approved.contract.approval.grant_ttl = std::chrono::hours(1);
  ASSERT_TRUE(host.tools().Register(std::move(echo)));
  ASSERT_TRUE(host.tools().Register(std::move(refuse)));
  ASSERT_TRUE(host.tools().Register(std::move(approved)));
  ASSERT_TRUE(host.workflows().Register("canary_flow", CanaryFlow));
  ASSERT_TRUE(host.workflows().Register("canary_fail", CanaryFail));
  ASSERT_TRUE(host.workflows().Register("canary_approval", CanaryApproval));
}

json::value FlowInput() {
  json::value tool_input = FastInput("acct-1", 1);
  tool_input.as_object()["memo"] = kToolInput;
  return json::object{{"customer", kInput}, {"tool_input", tool_input}};
}

// Denies every approval `workflow_id` waits for, with kDenyReason.
asio::awaitable<Result<void>> DenyAll(EmbeddedHost& host, std::string workflow_id) {
  for (const RunSummary& run : host.engine().Runs()) {
    if (run.ref.workflow_id != workflow_id) continue;
    for (const OperationRecord& op : run.operations) {
      if (op.state != OperationState::kAwaitingApproval) continue;
      ApprovalDecision decision;
      decision.approval_id = op.approval_id;
      decision.expected_intent_hash = op.intent_hash;
      decision.decided_by = "tester";
      decision.reason = kDenyReason;
      auto deny = host.engine().DecideApproval(workflow_id, std::move(decision));
      RECKON_CO_TRY(co_await std::move(deny));
    }
  }
  co_return Ok();
}

asio::awaitable<Result<void>> StartAll(EmbeddedHost& host) {
  RECKON_CO_TRY(co_await host.Recover());
  for (const char* id : {"wf-main", "wf-cancel", "wf-parked"}) {
    auto start = host.engine().Start(id, "canary_flow", FlowInput());
    RECKON_CO_TRY(co_await std::move(start));
  }
  auto fail = host.engine().Start("wf-fail", "canary_fail", FlowInput());
  RECKON_CO_TRY(co_await std::move(fail));
  auto approval = host.engine().Start("wf-deny", "canary_approval", FlowInput());
  RECKON_CO_TRY(co_await std::move(approval));
  RECKON_CO_TRY(co_await host.UntilIdle());
  auto signal = host.engine().Signal("wf-main", "go", json::serialize(json::value(kSignal)));
  RECKON_CO_TRY(co_await std::move(signal));
  auto deny = DenyAll(host, "wf-deny");
  RECKON_CO_TRY(co_await std::move(deny));
  auto cancel = host.engine().Cancel("wf-cancel", kCancelReason);
  RECKON_CO_TRY(co_await std::move(cancel));
  co_return co_await host.UntilIdle();
}

// A later life: recovers, and signals the run that still waits (wf-parked).
asio::awaitable<Result<void>> RecoverAndSignal(EmbeddedHost& host) {
  RECKON_CO_TRY(co_await host.Recover());
  auto signal = host.engine().Signal("wf-parked", "go", json::serialize(json::value(kLateSignal)));
  RECKON_CO_TRY(co_await std::move(signal));
  co_return co_await host.UntilIdle();
}

class PayloadCanaryTest : public ::testing::Test {
 protected:
  std::string journal() const { return dir_.File("journal.db"); }

  // Runs the five workflows in one host life with traces to files; returns the raw bytes of
  // the journal and its WAL as they are while the host still has them open.
  std::string RunEmbedded(const std::string& key_file) {
    EmbeddedHostOptions options;
    options.payload_key_file = key_file;
    auto opened = EmbeddedHost::Open(journal(), options);
    EXPECT_TRUE(opened) << opened.error().ToString();
    if (!opened) return "";
    auto jsonl = JsonlTraceSink::Open(dir_.File("trace.jsonl"));
    EXPECT_TRUE(jsonl);
    auto logger = spdlog::basic_logger_mt("canary-trace-" + std::to_string(++lives_),
                                          dir_.File("trace.log"));
    LogTraceSink log(logger);
    std::string raw;
    {
      std::unique_ptr<EmbeddedHost> host = std::move(opened).value();
      Register(*host);
      host->AddSink(*jsonl.value());
      host->AddSink(log);
      auto ran = host->Run(StartAll(*host));
      EXPECT_TRUE(ran) << ran.error().ToString();
      raw = ReadAll(journal()) + ReadAll(journal() + "-wal");
      EXPECT_FALSE(ReadAll(journal() + "-wal").empty());
    }
    logger->flush();
    spdlog::drop(logger->name());
    return raw;
  }

  std::string Traces() const {
    return ReadAll(dir_.File("trace.jsonl")) + ReadAll(dir_.File("trace.log"));
  }

  // The events of `workflow_id`'s run, read back through a journal opened with `codec`.
  std::vector<storage::Event> History(const std::string& workflow_id,
                                      const std::string& key_file) {
    std::unique_ptr<storage::PayloadCodec> codec;
    if (!key_file.empty()) codec = std::move(storage::OpenPayloadKeyFile(key_file)).value();
    storage::SqliteJournalOptions options;
    options.mode = storage::SqliteJournalOptions::Mode::kReadOnly;
    options.payload_codec = codec.get();
    auto journal = std::move(storage::OpenSqliteJournal(this->journal(), options)).value();
    auto run = std::move(journal->FindLatestRun(workflow_id)).value();
    EXPECT_TRUE(run.has_value());
    auto events = journal->ReadEvents(run->ref);
    EXPECT_TRUE(events) << events.error().ToString();
    return events ? std::move(events).value() : std::vector<storage::Event>{};
  }

  // For each event of `workflow_id` with a payload, in order, the id of the key that sealed it
  // ("" for one in the clear), as a decoder without keys reports it.
  std::vector<std::string> KeysOf(const std::string& workflow_id) const {
    auto db = std::move(storage::SqliteDb::Open(journal(), /*read_only=*/true)).value();
    auto stmt = std::move(db.Prepare("SELECT r.run_id, e.seq, e.payload FROM events e JOIN runs r "
                                     "USING (run_pk) WHERE r.workflow_id = ?1 ORDER BY e.seq"))
                    .value();
    stmt.Bind(1, workflow_id);
    storage::EventDecoder keyless;
    std::vector<std::string> keys;
    while (stmt.Step().value()) {
      const std::string run_id(stmt.ColumnText(0));
      auto body = keyless.Decode(stmt.ColumnBlob(2),
                                 storage::EventPlace{workflow_id, run_id, stmt.ColumnInt(1)});
      if (body) {
        if (storage::HasPayload(body.value())) keys.push_back("");
        continue;
      }
      const std::string& message = body.error().message();
      const std::size_t at = message.find("payload key '");
      EXPECT_NE(at, std::string::npos) << message;
      if (at == std::string::npos) continue;
      const std::size_t begin = at + std::string("payload key '").size();
      keys.push_back(message.substr(begin, message.find('\'', begin) - begin));
    }
    return keys;
  }

  TempDir dir_;
  int lives_ = 0;
};

TEST_F(PayloadCanaryTest, EmbeddedWithAKeyNoPayloadReachesTheJournalTheWalOrTheTrace) {
  const std::string keys = WriteKeyFile(dir_, "payload.keys", {"k1"});
  const std::string raw = RunEmbedded(keys);
  const std::vector<Canary> canaries = EmbeddedCanaries();
  EXPECT_EQ(Found(raw, canaries), std::vector<std::string>{}) << "in the journal or its WAL";
  EXPECT_EQ(Found(Traces(), canaries), std::vector<std::string>{}) << "in the trace";
  // What stays in the clear is there: ids and type names are what the search sees.
  EXPECT_NE(raw.find("wf-main"), std::string::npos);
  EXPECT_NE(raw.find("canary_flow"), std::string::npos);
  EXPECT_NE(Traces().find("wf-main"), std::string::npos);
  EXPECT_NE(Traces().find("operation.rejected"), std::string::npos);

  // The payloads are there, sealed: the key reads them back.
  std::string result;
  for (const storage::Event& event : History("wf-main", keys)) {
    if (auto* done = std::get_if<storage::WorkflowCompleted>(&event.body)) {
      result = done->result_json;
    }
  }
  EXPECT_TRUE(Contains(result, kResult)) << result;
  EXPECT_TRUE(Contains(result, kSignal)) << result;
  EXPECT_TRUE(Contains(result, Reversed(kToolInput))) << result;
}

TEST_F(PayloadCanaryTest, ControlWithoutAKeyTheSameSearchFindsEveryPayload) {
  const std::string raw = RunEmbedded("");
  EXPECT_EQ(Missing(raw, EmbeddedCanaries()), std::vector<std::string>{});
  // The trace never holds payloads, codec or not.
  EXPECT_EQ(Found(Traces(), EmbeddedCanaries()), std::vector<std::string>{});
  EXPECT_NE(Traces().find("wf-main"), std::string::npos);
}

TEST_F(PayloadCanaryTest, WithoutTheKeyRecoveryNamesItAndAfterRotationOldAndNewPayloadsRead) {
  const std::string k1 = WriteKeyFile(dir_, "k1.keys", {"k1"});
  RunEmbedded(k1);

  // A process without the key that sealed them refuses to recover, naming the key.
  for (const std::string& keys : {std::string(), WriteKeyFile(dir_, "k2.keys", {"k2"})}) {
    EmbeddedHostOptions options;
    options.payload_key_file = keys;
    auto host = EmbeddedHost::Open(journal(), options);
    ASSERT_TRUE(host) << host.error().ToString();
    auto recovered = host.value()->Run(host.value()->Recover());
    ASSERT_FALSE(recovered);
    EXPECT_EQ(recovered.error().code(), Errc::kFailedPrecondition);
    EXPECT_NE(recovered.error().message().find("payload key 'k1'"), std::string::npos)
        << recovered.error().ToString();
  }

  // Rotation: k2 added after k1. The parked run recovers from k1's payloads, goes on under k2.
  const std::string rotated = WriteKeyFile(dir_, "rotated.keys", {"k1", "k2"});
  {
    EmbeddedHostOptions options;
    options.payload_key_file = rotated;
    auto host = std::move(EmbeddedHost::Open(journal(), options)).value();
    Register(*host);
    auto ran = host->Run(RecoverAndSignal(*host));
    ASSERT_TRUE(ran) << ran.error().ToString();
    std::vector<Canary> late = {{"late signal", kLateSignal}};
    EXPECT_EQ(Found(ReadAll(journal()) + ReadAll(journal() + "-wal"), late),
              std::vector<std::string>{});
  }
  const std::vector<storage::Event> events = History("wf-parked", rotated);
  ASSERT_FALSE(events.empty());
  EXPECT_TRUE(std::holds_alternative<storage::WorkflowCompleted>(events.back().body));
  EXPECT_TRUE(
      Contains(std::get<storage::WorkflowStarted>(events.front().body).input_json, kInput));
  // The start was sealed with k1, the completion with k2: a decoder without keys names them.
  const std::vector<std::string> sealed_with = KeysOf("wf-parked");
  ASSERT_GE(sealed_with.size(), 2u);
  EXPECT_EQ(sealed_with.front(), "k1");
  EXPECT_EQ(sealed_with.back(), "k2");
}


// --- server mode ------------------------------------------------------------------------------

// A signal_then_call run of reckon-test-worker's echo tool (tests/workers/test_worker_main.cc).
std::string ServerFlowInput() {
  json::value tool_input = FastInput("acct-1", 1);
  tool_input.as_object()["memo"] = kToolInput;
  return json::serialize(json::object{
      {"customer", kInput}, {"signal", "go"}, {"tool", "echo"}, {"input", tool_input}});
}

std::vector<Canary> ServerCanaries() {
  return {{"workflow input", kInput},
          {"tool input", kToolInput},
          {"tool output", Reversed(kToolInput)},
          {"signal payload", kSignal},
          {"cancel reason", kCancelReason}};
}

// What one server life left on disk: the journal and its WAL while it ran, the journal after
// a graceful stop, the effect trace and the processes' logs; and `reckon history` of the run.
struct ServerFiles {
  std::string running;
  std::string stopped;
  std::string trace;
  std::string logs;
  std::string history;
};

ServerFiles RunServer(std::vector<std::string> extra_args) {
  ServerFiles files;
  auto started = ReckonServer::Start(RECKON_CLI_PATH, std::move(extra_args));
  EXPECT_TRUE(started) << started.error().ToString();
  if (!started) return files;
  ReckonServer& server = *started.value();
  EXPECT_TRUE(server.StartWorker(RECKON_TEST_WORKER, "worker"));
  for (const char* id : {"wf-srv", "wf-srv-cancel"}) {
    const CliRun run = server.StartWorkflow(id, "signal_then_call", ServerFlowInput());
    EXPECT_EQ(run.code(), 0) << run.Describe();
  }
  const std::string payload = json::serialize(json::value(kSignal));
  CliRun signal = server.Cli({"signal", "wf-srv", "go", "--payload", payload});
  EXPECT_EQ(signal.code(), 0) << signal.Describe();
  CliRun cancel = server.Cli({"cancel", "wf-srv-cancel", "--reason", kCancelReason});
  EXPECT_EQ(cancel.code(), 0) << cancel.Describe();
  EXPECT_TRUE(Eventually([&] {
    const CliRun show = server.Cli({"show", "wf-srv", "--json"});
    return show.code() == 0 && json::parse(show.out).at("status") == "completed";
  }));
  files.history = server.Cli({"history", "wf-srv", "--json"}).out;
  files.running = ReadAll(server.journal_path()) + ReadAll(server.journal_path() + "-wal");
  EXPECT_TRUE(server.Stop());
  files.stopped = ReadAll(server.journal_path());
  files.trace = ReadAll(server.journal_path() + ".trace.jsonl");
  files.logs = ReadAll(server.dir().File("server.log")) + ReadAll(server.dir().File("worker.log"));
  return files;
}

TEST(PayloadCanaryServerTest, WithAKeyNoPayloadReachesTheJournalTheWalTheTraceOrTheLog) {
  TempDir keys_dir;
  const std::string keys = WriteKeyFile(keys_dir, "payload.keys", {"k1"});
  const ServerFiles files = RunServer({"--payload-key", keys});
  const std::vector<Canary> canaries = ServerCanaries();
  EXPECT_EQ(Found(files.running, canaries), std::vector<std::string>{}) << "journal and WAL";
  EXPECT_EQ(Found(files.stopped, canaries), std::vector<std::string>{}) << "journal, stopped";
  EXPECT_EQ(Found(files.trace, canaries), std::vector<std::string>{}) << "trace";
  EXPECT_EQ(Found(files.logs, canaries), std::vector<std::string>{}) << "logs";
  EXPECT_NE(files.running.find("wf-srv"), std::string::npos);
  EXPECT_NE(files.trace.find("wf-srv"), std::string::npos);
  // The server holds the key: a reader of the history sees the payloads.
  EXPECT_TRUE(Contains(files.history, kSignal)) << files.history;
  EXPECT_TRUE(Contains(files.history, Reversed(kToolInput))) << files.history;
  EXPECT_NE(files.logs.find("sealed with key 'k1'"), std::string::npos) << files.logs;
}

TEST(PayloadCanaryServerTest, ControlWithoutAKeyTheSameSearchFindsEveryPayload) {
  const ServerFiles files = RunServer({});
  EXPECT_EQ(Missing(files.running, ServerCanaries()), std::vector<std::string>{});
  EXPECT_EQ(Missing(files.stopped, ServerCanaries()), std::vector<std::string>{});
  EXPECT_EQ(Found(files.trace, ServerCanaries()), std::vector<std::string>{});
}

// `reckon server --payload-key` on `journal` until it exits (at most 30 s): its exit status and
// its log.
std::pair<ExitStatus, std::string> ServerThatExits(const TempDir& dir, const std::string& journal,
                                                   const std::string& keys) {
  SubprocessOptions options;
  options.args = {"server", "--journal", journal, "--listen", "127.0.0.1:0", "--quiet",
                  "--payload-key", keys};
  options.stderr_path = dir.File("refused-server.log");
  auto server = Subprocess::Start(RECKON_CLI_PATH, std::move(options));
  EXPECT_TRUE(server) << server.error().ToString();
  if (!server) return {};
  auto status = server.value().WaitFor(std::chrono::seconds(30));
  EXPECT_TRUE(status) << "the server did not exit: " << ReadAll(dir.File("refused-server.log"));
  return {status ? status.value() : ExitStatus{}, ReadAll(dir.File("refused-server.log"))};
}

TEST_F(PayloadCanaryTest, AServerWithoutTheKeyOrWithAnUnsafeKeyFileExitsSayingWhy) {
  const std::string k1 = WriteKeyFile(dir_, "k1.keys", {"k1"});
  RunEmbedded(k1);  // leaves wf-parked running, its payloads sealed with k1

  const auto [missing, missing_log] =
      ServerThatExits(dir_, journal(), WriteKeyFile(dir_, "k2.keys", {"k2"}));
  EXPECT_EQ(missing.code, 1) << missing_log;
  EXPECT_NE(missing_log.find("payload key 'k1'"), std::string::npos) << missing_log;

  const std::string unsafe = WriteKeyFile(dir_, "unsafe.keys", {"k1"});
  ::chmod(unsafe.c_str(), 0644);
  const auto [refused, refused_log] = ServerThatExits(dir_, journal(), unsafe);
  EXPECT_EQ(refused.code, 1) << refused_log;
  EXPECT_NE(refused_log.find("chmod 600"), std::string::npos) << refused_log;
}

}  // namespace
}  // namespace reckon::testing
