// `reckon history ID --export FILE` against a real server with a real worker
// (reckon-test-worker): the file holds exactly the journal's events, replays against the same
// workflow code, and reads the same whether it came from the server or from the journal file
// (--journal), sealed payloads included.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <boost/json.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "reckon/storage/event_codec.h"
#include "reckon/storage/history_file.h"
#include "reckon/storage/sqlite/sqlite_journal.h"
#include "reckon/worker/replayer.h"
#include "reckon/host/testing/test_workflows.h"
#include "tests/support/reckon_server.h"

namespace reckon::testing {
namespace {

namespace json = boost::json;

std::string SignalInput() {
  return json::serialize(json::object{
      {"signal", "go"},
      {"tool", "charge"},
      {"input", json::object{{"account", "acct-7"}, {"amount_cents", 300}}}});
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A payload key file with one key, "k1" (storage/crypto/payload_keys.h).
std::string WriteKeyFile(const TempDir& dir) {
  const std::string path = dir.File("payload.keys");
  std::string hex;
  for (int i = 0; i < 32; ++i) {
    char byte[3];
    std::snprintf(byte, sizeof byte, "%02x", (i * 13 + 5) & 0xff);
    hex += byte;
  }
  std::ofstream(path) << "k1 " << hex << "\n";
  ::chmod(path.c_str(), 0600);
  return path;
}

class HistoryExportTest : public ::testing::Test {
 protected:
  void Boot(std::vector<std::string> server_args) {
    auto server = ReckonServer::Start(RECKON_CLI_PATH, std::move(server_args));
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(server).value();
    auto worker = server_->StartWorker(RECKON_TEST_WORKER, "worker");
    ASSERT_TRUE(worker) << worker.error().ToString();
  }

  CliRun Cli(std::vector<std::string> args) { return server_->Cli(std::move(args)); }

  // Starts a signal_then_call run and, with `signal`, lets it complete.
  void Run(const std::string& id, bool signal) {
    const CliRun started = server_->StartWorkflow(id, "signal_then_call", SignalInput());
    ASSERT_EQ(started.code(), 0) << started.Describe();
    if (signal) {
      const CliRun signalled = Cli({"signal", id, "go", "--payload", "\"yes\""});
      ASSERT_EQ(signalled.code(), 0) << signalled.Describe();
    }
    const std::string want = signal ? "completed" : "running";
    ASSERT_TRUE(Eventually([&] {
      const CliRun shown = Cli({"show", id, "--json"});
      if (shown.code() != 0) return false;
      const json::value run = json::parse(shown.out);
      // A waiting run has recorded its wait once the worker's first activation committed.
      return run.at("status") == want.c_str() &&
             (signal || run.at("waits_on") == "signal");
    })) << id;
  }

  // The newest run of `id` as the journal file holds it (read-only, beside the server).
  std::vector<storage::Event> JournalEvents(const std::string& id) {
    storage::SqliteJournalOptions options;
    options.mode = storage::SqliteJournalOptions::Mode::kReadOnly;
    auto journal = std::move(storage::OpenSqliteJournal(server_->journal_path(), options)).value();
    auto run = std::move(journal->FindLatestRun(id)).value();
    EXPECT_TRUE(run.has_value());
    return std::move(journal->ReadEvents(run->ref)).value();
  }

  Result<ReplayReport> Replay(const storage::HistoryFile& history) {
    WorkflowRegistry workflows;
    EXPECT_TRUE(RegisterTestWorkflows(workflows));
    return ReplayHistory(workflows, history);
  }

  std::unique_ptr<ReckonServer> server_;
  TempDir out_;
};

TEST_F(HistoryExportTest, TheFileHoldsExactlyTheJournalsEventsAndReplays) {
  Boot({});
  Run("h-1", /*signal=*/true);
  const std::string file = out_.File("h-1.json");
  const CliRun exported = Cli({"history", "h-1", "--export", file});
  ASSERT_EQ(exported.code(), 0) << exported.Describe();

  auto history = storage::ReadHistoryFile(file);
  ASSERT_TRUE(history) << history.error().message();
  const std::vector<storage::Event> journaled = JournalEvents("h-1");
  EXPECT_EQ(history.value().workflow_id, "h-1");
  EXPECT_EQ(history.value().workflow_type, "signal_then_call");
  ASSERT_EQ(history.value().events.size(), journaled.size());
  for (std::size_t i = 0; i < journaled.size(); ++i) {
    EXPECT_EQ(history.value().events[i].seq, journaled[i].seq);
    EXPECT_EQ(history.value().events[i].recorded_at_us, journaled[i].recorded_at_us);
    EXPECT_EQ(storage::EncodeEventBody(history.value().events[i].body),
              storage::EncodeEventBody(journaled[i].body))
        << "event " << i + 1;
  }
  EXPECT_EQ(exported.out, "exported " + std::to_string(journaled.size()) +
                              " events of h-1 (signal_then_call, run " +
                              history.value().run_id + ") to " + file + "\n");

  auto replayed = Replay(history.value());
  ASSERT_TRUE(replayed) << replayed.error().message();
  EXPECT_EQ(replayed.value().history_status, storage::RunStatus::kCompleted);
  EXPECT_EQ(replayed.value().calls_replayed, 1u);

  // The same run read from the journal file, without the server, is the same file.
  const std::string direct = out_.File("h-1-direct.json");
  const CliRun from_journal =
      Cli({"history", "h-1", "--journal", server_->journal_path(), "--export", direct});
  ASSERT_EQ(from_journal.code(), 0) << from_journal.Describe();
  EXPECT_EQ(ReadText(direct), ReadText(file));
}

TEST_F(HistoryExportTest, ARunInFlightExportsAndReplaysToWhereItWaits) {
  Boot({});
  Run("h-2", /*signal=*/false);
  const std::string file = out_.File("h-2.json");
  const CliRun exported = Cli({"history", "h-2", "--export", file, "--json"});
  ASSERT_EQ(exported.code(), 0) << exported.Describe();
  const json::value reply = json::parse(exported.out);
  EXPECT_EQ(reply.at("workflow_id"), "h-2");
  EXPECT_EQ(reply.at("file"), file.c_str());
  auto history = storage::ReadHistoryFile(file);
  ASSERT_TRUE(history) << history.error().message();
  EXPECT_EQ(reply.at("events").to_number<std::size_t>(), history.value().events.size());
  auto replayed = Replay(history.value());
  ASSERT_TRUE(replayed) << replayed.error().message();
  EXPECT_EQ(replayed.value().history_status, storage::RunStatus::kRunning);
  EXPECT_FALSE(replayed.value().code_finished);
}

TEST_F(HistoryExportTest, SealedPayloadsExportInTheClearFromTheServerOrWithTheKey) {
  TempDir keys;
  const std::string key_file = WriteKeyFile(keys);
  Boot({"--payload-key", key_file});
  Run("h-3", /*signal=*/true);
  const std::string file = out_.File("h-3.json");
  const CliRun exported = Cli({"history", "h-3", "--export", file});
  ASSERT_EQ(exported.code(), 0) << exported.Describe();
  EXPECT_NE(ReadText(file).find("acct-7"), std::string::npos) << "payloads are in the clear";

  const std::string direct = out_.File("h-3-direct.json");
  const CliRun keyless =
      Cli({"history", "h-3", "--journal", server_->journal_path(), "--export", direct});
  EXPECT_EQ(keyless.code(), 1) << keyless.Describe();
  EXPECT_NE(keyless.err.find("--payload-key"), std::string::npos) << keyless.err;
  EXPECT_NE(keyless.err.find("k1"), std::string::npos) << keyless.err;
  EXPECT_FALSE(std::ifstream(direct));

  const CliRun keyed = Cli({"history", "h-3", "--journal", server_->journal_path(),
                            "--payload-key", key_file, "--export", direct});
  ASSERT_EQ(keyed.code(), 0) << keyed.Describe();
  EXPECT_EQ(ReadText(direct), ReadText(file));
}

// A chain of three runs (continue_n): `--run` prints and exports an earlier one, from the
// server or the journal file, and that history replays to its continuation.
TEST_F(HistoryExportTest, AnEarlierRunOfAChainIsPrintedAndExportedByItsRunId) {
  Boot({});
  const CliRun started = server_->StartWorkflow("c-1", "continue_n", R"({"n": 0, "rounds": 2})");
  ASSERT_EQ(started.code(), 0) << started.Describe();
  json::value shown;
  ASSERT_TRUE(Eventually([&] {
    const CliRun run = Cli({"show", "c-1", "--json"});
    if (run.code() != 0) return false;
    shown = json::parse(run.out);
    return shown.at("status") == "completed";
  }));
  const json::array& runs = shown.at("runs").as_array();
  ASSERT_EQ(runs.size(), 3u) << json::serialize(shown);
  const std::string first(runs[0].at("run_id").as_string());

  const CliRun printed = Cli({"history", "c-1", "--run", first});
  ASSERT_EQ(printed.code(), 0) << printed.Describe();
  EXPECT_NE(printed.out.find("WorkflowContinuedAsNew"), std::string::npos) << printed.out;
  EXPECT_NE(printed.out.find(R"(\"n\":0)"), std::string::npos) << printed.out;  // its input

  const std::string file = out_.File("c-1-first.json");
  const CliRun exported = Cli({"history", "c-1", "--run", first, "--export", file});
  ASSERT_EQ(exported.code(), 0) << exported.Describe();
  auto history = storage::ReadHistoryFile(file);
  ASSERT_TRUE(history) << history.error().message();
  EXPECT_EQ(history.value().run_id, first);
  auto replayed = Replay(history.value());
  ASSERT_TRUE(replayed) << replayed.error().message();
  EXPECT_EQ(replayed.value().history_status, storage::RunStatus::kContinuedAsNew);

  const std::string direct = out_.File("c-1-first-direct.json");
  const CliRun read = Cli({"history", "c-1", "--run", first, "--journal",
                           server_->journal_path(), "--export", direct});
  ASSERT_EQ(read.code(), 0) << read.Describe();
  EXPECT_EQ(ReadText(direct), ReadText(file));

  const CliRun unknown = Cli({"history", "c-1", "--run", "r-nope"});
  EXPECT_NE(unknown.code(), 0);
  EXPECT_NE(unknown.err.find("no run 'r-nope'"), std::string::npos) << unknown.Describe();
}

TEST_F(HistoryExportTest, BadRequestsAreRefusedAndWriteNothing) {
  Boot({});
  const std::string file = out_.File("none.json");
  const CliRun unknown = Cli({"history", "no-such-run", "--export", file});
  EXPECT_EQ(unknown.code(), 2) << unknown.Describe();
  EXPECT_NE(unknown.err.find("no workflow 'no-such-run'"), std::string::npos) << unknown.err;
  EXPECT_FALSE(std::ifstream(file));

  const CliRun journal_only = Cli({"history", "x", "--journal", server_->journal_path()});
  EXPECT_NE(journal_only.code(), 0);
  EXPECT_NE(journal_only.err.find("--export"), std::string::npos) << journal_only.err;

  const CliRun postgres =
      Cli({"history", "x", "--journal", "postgresql://localhost/db", "--export", file});
  EXPECT_EQ(postgres.code(), 2) << postgres.Describe();
  EXPECT_NE(postgres.err.find("through its server"), std::string::npos) << postgres.err;
}

}  // namespace
}  // namespace reckon::testing
