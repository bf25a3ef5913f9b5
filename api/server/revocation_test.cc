// A worker whose token is revoked, or expires, is cut off at once, against the real `reckon
// server`, `reckon` CLI and reckon-test-worker processes on 127.0.0.1 (docs/SECURITY.md,
// issue 30 item 6): its long polls opened before the revocation end without a task, it no
// longer counts as connected for its workflow type (a start finds no worker at once instead of
// waiting for it), and it stops with one clear error instead of retrying its refused requests.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "tests/support/reckon_server.h"
#include "tests/support/subprocess.h"

namespace reckon::testing {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Lines of `text` that contain `needle`.
int CountLines(const std::string& text, const std::string& needle) {
  std::istringstream lines(text);
  int count = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find(needle) != std::string::npos) ++count;
  }
  return count;
}

std::string ChargeInput() {
  return json::serialize(json::object{
      {"tool", "charge"}, {"input", json::object{{"account", "acct-7"}, {"amount_cents", 300}}}});
}

class RevocationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = ReckonServer::Start(RECKON_CLI_PATH);
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(server).value();
  }

  // A principal `name` with the worker role (and `extra` flags); its token's file.
  std::string CreateWorkerToken(const std::string& name, std::vector<std::string> extra = {}) {
    const std::string file = server_->dir().File(name + ".token");
    std::vector<std::string> args = {"auth", "token", "create", "--name", name,
                                     "--role", "worker", "--out", file};
    args.insert(args.end(), extra.begin(), extra.end());
    const CliRun created = server_->Cli(args);
    EXPECT_EQ(created.code(), 0) << created.Describe();
    return file;
  }

  // reckon-test-worker --id NAME with the token in `token_file`; its stderr in <NAME>.log, its
// log lines on its stdout.
  Subprocess StartWorker(const std::string& name, const std::string& token_file) {
    SubprocessOptions options;
    options.args = {"--server", server_->address(), "--id", name, "--token-file", token_file};
    options.env = server_->client_env();
    options.stderr_path = server_->dir().File(name + ".log");
    auto worker = Subprocess::Start(RECKON_TEST_WORKER, std::move(options));
    EXPECT_TRUE(worker) << worker.error().ToString();
    return std::move(worker).value();
  }

  // What the worker `name` wrote: its log lines (stdout) and its last words (stderr, <name>.log).
  // Stops the worker first if it still runs.
  std::string WorkerLog(Subprocess& worker, const std::string& name) {
    if (worker.running() && !worker.WaitFor(10ms)) (void)worker.Terminate(5s);
    auto out = worker.ReadAll(5s);
    return (out ? out.value() : std::string()) + ReadFile(server_->dir().File(name + ".log"));
  }
  std::string ServerLog() { return ReadFile(server_->dir().File("server.log")); }

  // The ids `reckon workers` lists.
  std::vector<std::string> Workers() {
    const CliRun run = server_->Cli({"workers", "--json"});
    std::vector<std::string> ids;
    if (run.code() != 0) return ids;
    const json::value listed = json::parse(run.out);
    for (const json::value& w : listed.at("workers").as_array()) {
      ids.emplace_back(w.at("worker_id").as_string());
    }
    return ids;
  }
  bool Listed(const std::string& id) {
    const auto ids = Workers();
    return std::find(ids.begin(), ids.end(), id) != ids.end();
  }

  std::unique_ptr<ReckonServer> server_;
};

TEST_F(RevocationTest, ARevokedWorkerIsUnregisteredAtOnceAndStopsWithOneClearError) {
  const std::string token = CreateWorkerToken("rogue");
  Subprocess rogue = StartWorker("rogue", token);
  ASSERT_TRUE(Eventually([&] { return Listed("rogue"); }));
  const int refusals_before = CountLines(ServerLog(), "audit: refused");

  const CliRun revoked = server_->Cli({"auth", "token", "revoke", "rogue"});
  ASSERT_EQ(revoked.code(), 0) << revoked.Describe();
  // Unregistered by the time the revocation is answered.
  EXPECT_FALSE(Listed("rogue"));
  // So a start of its workflow type finds no worker: refused at once, as with no worker at all
  // (the rule of ClientApi::Start), not admitted for a worker that can no longer answer (which
  // kept the start waiting until the client gave up).
  const CliRun start = server_->Cli({"start", "rev-1", "--type", "call_once", "--input",
                                     ChargeInput()},
                                    10s);
  EXPECT_TRUE(start.status.exited && start.status.code != 0) << start.Describe();
  EXPECT_NE(start.err.find("no connected worker hosts workflow type 'call_once'"),
            std::string::npos)
      << start.Describe();

  // The worker stops by itself, non-zero, saying once why; it sent nothing more to be refused.
  auto ended = rogue.WaitFor(10s);
  const std::string log = WorkerLog(rogue, "rogue");
  ASSERT_TRUE(ended) << "a revoked worker must stop, not retry: " << log;
  EXPECT_FALSE(ended.value().Succeeded()) << ended.value().ToString();
  EXPECT_EQ(CountLines(log, "was revoked"), 1) << log;
  EXPECT_NE(log.find("ask an admin for a new one"), std::string::npos) << log;
  // Bound: after the revocation, at most 2 of its requests were refused (audit lines); the
  // flood this replaces was about 90 a second.
  const std::string server_log = ServerLog();
  EXPECT_LE(CountLines(server_log, "audit: refused") - refusals_before, 2) << server_log;
  EXPECT_NE(server_log.find("(credential-withdrawn): unauthenticated: the token of principal "
                            "'rogue' was revoked"),
            std::string::npos)
      << server_log;
}

TEST_F(RevocationTest, ARevokedWorkerGetsNoTaskFromThePollsItOpenedBefore) {
  // The rogue's polls are the oldest: before the fix the first task went to them.
  Subprocess rogue = StartWorker("rogue", CreateWorkerToken("rogue"));
  ASSERT_TRUE(Eventually([&] { return Listed("rogue"); }));
  Subprocess good = StartWorker("good", server_->TokenFile("worker"));
  ASSERT_TRUE(Eventually([&] { return Listed("good"); }));

  const CliRun revoked = server_->Cli({"auth", "token", "revoke", "rogue"});
  ASSERT_EQ(revoked.code(), 0) << revoked.Describe();
  const auto started_at = std::chrono::steady_clock::now();
  const CliRun start = server_->StartWorkflow("rev-2", "call_once", ChargeInput());
  ASSERT_EQ(start.code(), 0) << start.Describe();
  // The good worker runs it at once: no workflow task waited out a lease on the rogue
  // (workflow_task_timeout, 10 s each time it went there).
  EXPECT_TRUE(Eventually(
      [&] {
        const CliRun shown = server_->Cli({"show", "rev-2", "--json"});
        return shown.code() == 0 && json::parse(shown.out).at("status") == "completed";
      },
      8s))
      << server_->Cli({"show", "rev-2"}).Describe();
  const auto took = std::chrono::steady_clock::now() - started_at;
  auto ended = rogue.WaitFor(10s);
  const std::string log = WorkerLog(rogue, "rogue");
  ASSERT_TRUE(ended) << log;
  EXPECT_FALSE(ended.value().Succeeded());
  // The rogue never had a task to answer (a refused answer logs "result not taken").
  EXPECT_EQ(CountLines(log, "result not taken"), 0) << log;
  std::printf("revoked worker: run completed %lld ms after the revocation; workflow tasks the "
              "revoked worker answered: %d\n",
              static_cast<long long>(
                  std::chrono::duration_cast<std::chrono::milliseconds>(took).count()),
              CountLines(log, "result not taken"));
  auto stopped = good.Terminate(10s);
  ASSERT_TRUE(stopped);
  EXPECT_TRUE(stopped.value().Succeeded()) << stopped.value().ToString();
}

TEST_F(RevocationTest, AWorkerWhoseTokenExpiresIsCutOffWhenItExpires) {
  const std::string token = CreateWorkerToken("brief", {"--expires", "4s"});
  const auto created = std::chrono::steady_clock::now();
  Subprocess brief = StartWorker("brief", token);
  ASSERT_TRUE(Eventually([&] { return Listed("brief"); }, 3s));
  // Its polls (20 s long) are parked; the server notices the expiry by itself within a second
  // or so (the credential recheck), ends them and unregisters the worker.
  auto ended = brief.WaitFor(12s);
  const std::string log = WorkerLog(brief, "brief");
  ASSERT_TRUE(ended) << "a worker whose token expired must stop: " << log;
  EXPECT_FALSE(ended.value().Succeeded());
  EXPECT_GE(std::chrono::steady_clock::now() - created, 4s);
  EXPECT_FALSE(Listed("brief"));
  EXPECT_EQ(CountLines(log, "has expired"), 1) << log;
  EXPECT_LE(CountLines(ServerLog(), "audit: refused"), 2) << ServerLog();
}

}  // namespace
}  // namespace reckon::testing
