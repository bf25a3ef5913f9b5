// Runs the real `reckon` binary (RECKON_CLI_PATH) with stdin from a file and checks the exact
// bytes it writes to stdout and stderr, and its exit code.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "reckon/base/intent_hash.h"
#include "reckon/base/jcs.h"
#include "reckon/storage/sqlite/sqlite_journal.h"

namespace reckon {
namespace {

struct Outcome {
  int exit_code = -1;  // 128 + signal number if the process was killed
  std::string out;
  std::string err;
};

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "reckon_cli_test.XXXXXX");
    ASSERT_NE(mkdtemp(pattern.data()), nullptr) << "mkdtemp: " << errno;
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static std::string ReadFile(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // Runs `reckon args...` with `input` on stdin; stdout and stderr go to files, so no pipe can
  // fill up and deadlock.
  Outcome Reckon(const std::vector<std::string>& args, std::string_view input = "") {
    const std::filesystem::path in_path = dir_ / "stdin";
    const std::filesystem::path out_path = dir_ / "stdout";
    const std::filesystem::path err_path = dir_ / "stderr";
    std::ofstream(in_path, std::ios::binary) << input;
    std::vector<std::string> argv_storage = {RECKON_CLI_PATH};
    argv_storage.insert(argv_storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& arg : argv_storage) argv.push_back(arg.data());
    argv.push_back(nullptr);

    const pid_t pid = fork();
    if (pid == 0) {
      const int in = open(in_path.c_str(), O_RDONLY);
      const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) {
        _exit(126);
      }
      execv(argv[0], argv.data());
      _exit(127);
    }
    Outcome run;
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return run;
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    run.out = ReadFile(out_path);
    run.err = ReadFile(err_path);
    return run;
  }

  std::filesystem::path dir_;
};

TEST_F(CliTest, JcsWritesExactlyTheCanonicalBytes) {
  const Outcome run = Reckon({"jcs"}, "{ \"b\": [1.0, 1e21, \"\\u00e9\"],\n  \"a\": null }\n");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "{\"a\":null,\"b\":[1,1e+21,\"\xC3\xA9\"]}");
  EXPECT_EQ(run.err, "");
}

TEST_F(CliTest, JcsHandlesLargeInput) {
  std::string input = "[";
  for (int i = 0; i < 200000; ++i) input += (i > 0 ? ", " : "") + std::to_string(i) + ".0";
  input += "]";
  const Outcome run = Reckon({"jcs"}, input);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, CanonicalizeJson(input).value());
}

TEST_F(CliTest, JcsRejectsMalformedJsonWithExitCode2AndTheByteOffset) {
  const Outcome run = Reckon({"jcs"}, R"({"a":1,"a":2})");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err, "reckon jcs: duplicate member name \"a\" at byte 7\n");

  for (const std::string_view bad : {"{\"a\":}", "[1,", "", "[NaN]", "[\"\\ud800\"]", "1e400"}) {
    const Outcome r = Reckon({"jcs"}, bad);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_EQ(r.out, "") << bad;
    EXPECT_TRUE(r.err.starts_with("reckon jcs: ")) << r.err;
    EXPECT_NE(r.err.find("byte"), std::string::npos) << r.err;
  }
}

TEST_F(CliTest, FingerprintPrintsTheIntentHash) {
  const Outcome run = Reckon({"intent-hash"}, R"({"b":1.0,"a":"x"})");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, ToHex(Sha256(R"({"a":"x","b":1})")) + "\n");
  EXPECT_EQ(run.err, "");
}

TEST_F(CliTest, FingerprintLeavesSecretsOut) {
  const std::vector<std::string> args = {"intent-hash", "--secret", "card.number", "--secret",
                                         "token"};
  const Outcome a =
      Reckon(args, R"({"amount":5,"token":"t1","card":{"number":"4111","exp":"12/30"}})");
  const Outcome b =
      Reckon(args, R"({"card":{"exp":"12/30","number":"5500"},"token":"t2","amount":5})");
  const Outcome c =
      Reckon(args, R"({"amount":6,"token":"t1","card":{"number":"4111","exp":"12/30"}})");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, ToHex(Sha256(R"({"amount":5,"card":{"exp":"12/30"}})")) + "\n");
  EXPECT_EQ(b.out, a.out);
  EXPECT_NE(c.out, a.out);
  const Outcome without_secrets = Reckon({"fingerprint"}, R"({"amount":5,"token":"t1"})");
  EXPECT_NE(without_secrets.out, Reckon({"fingerprint"}, R"({"amount":5,"token":"t2"})").out);
}

TEST_F(CliTest, FingerprintRejectsBadInputWithExitCode2) {
  const Outcome run = Reckon({"intent-hash"}, "{\"a\":1,}");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err,
            "reckon intent-hash: unexpected character '}' at byte 7, expected a member name\n");
  const Outcome too_big = Reckon({"fingerprint"}, R"({"n":9007199254740993})");
  EXPECT_EQ(too_big.exit_code, 2);
  EXPECT_NE(too_big.err.find("/n"), std::string::npos) << too_big.err;
}

TEST_F(CliTest, HelpListsTheSubcommands) {
  const Outcome run = Reckon({"--help"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_NE(run.out.find("jcs"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("intent-hash"), std::string::npos) << run.out;
}

TEST_F(CliTest, UnknownSubcommandIsNamed) {
  const Outcome run = Reckon({"frobnicate"});
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("frobnicate"), std::string::npos) << run.err;
}

TEST_F(CliTest, UsageErrorsExitNonZeroWithCli11sMessage) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {}, {"frobnicate"}, {"jcs", "--bogus"}, {"intent-hash", "--secret"}}) {
    const Outcome run = Reckon(args, "{}");
    EXPECT_NE(run.exit_code, 0) << testing::PrintToString(args);
    EXPECT_NE(run.exit_code, 2) << "2 is reserved for bad input";
    EXPECT_FALSE(run.err.empty()) << testing::PrintToString(args);
    EXPECT_EQ(run.out, "") << testing::PrintToString(args);
  }
}

// The refund sample's contracts, as a program that hosts those tools would publish them.
const std::string kRefundContracts =
    std::string(RECKON_SOURCE_DIR) + "/samples/refund/refund_contracts.json";

TEST_F(CliTest, PlanValidateAcceptsTheSamplePlans) {
  // The contracts as published, and as the tools file declares them.
  for (const std::string& contracts :
       {kRefundContracts, std::string(RECKON_SOURCE_DIR) + "/samples/refund/tools.json"}) {
    for (const char* plan : {"refund_one.json", "refund_two.json"}) {
      const Outcome run = Reckon({"plan", "validate", "--contracts", contracts,
                                  std::string(RECKON_SOURCE_DIR) + "/samples/plans/" + plan});
      EXPECT_EQ(run.exit_code, 0) << run.err;
      EXPECT_NE(run.out.find("is valid"), std::string::npos) << run.out;
    }
  }
}

TEST_F(CliTest, PlanValidateNamesEveryProblemAndExits2) {
  const Outcome run =
      Reckon({"plan", "validate", "--contracts", kRefundContracts,
              std::string(RECKON_SOURCE_DIR) + "/samples/plans/invalid/loosens_contract.json"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out, "");
  EXPECT_NE(run.err.find("(3 problems)"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("step 'refund': overrides.max_attempts: 10 would loosen"),
            std::string::npos) << run.err;
  const Outcome missing = Reckon({"plan", "validate", (dir_ / "nope.json").string()});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("cannot read plan file"), std::string::npos) << missing.err;
  std::ofstream(dir_ / "garbage.json") << "{\"plan_id\": ";
  const Outcome garbage = Reckon({"plan", "validate", (dir_ / "garbage.json").string()});
  EXPECT_EQ(garbage.exit_code, 2);
  EXPECT_NE(garbage.err.find("garbage.json"), std::string::npos) << garbage.err;
}

TEST_F(CliTest, PlanValidateNamesABadContractsFile) {
  const std::string plan = std::string(RECKON_SOURCE_DIR) + "/samples/plans/refund_one.json";
  std::ofstream(dir_ / "contracts.json") << "[{\"name\": \"send_refund\"}]";
  const Outcome bad = Reckon({"plan", "validate", "--contracts", (dir_ / "contracts.json").string(), plan});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("contracts.json: contract [0]"), std::string::npos) << bad.err;
  std::ofstream(dir_ / "object.json") << "{}";
  const Outcome object = Reckon({"plan", "validate", "--contracts", (dir_ / "object.json").string(), plan});
  EXPECT_EQ(object.exit_code, 2) << object.err;
  EXPECT_NE(object.err.find("expected a JSON array"), std::string::npos) << object.err;
}

TEST_F(CliTest, ContractsMcpReportsHintsAndToolsWithoutContracts) {
  const Outcome run = Reckon({"contracts", "--contracts", kRefundContracts, "--mcp",
                              std::string(RECKON_SOURCE_DIR) + "/samples/mcp/tools_list.json"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("2 no_contract"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("stricter_than_hints"), std::string::npos) << run.out;
}

TEST_F(CliTest, ServerCommandsSayWhenNoServerListens) {
  const Outcome run = Reckon({"list", "--server", "127.0.0.1:1"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("cannot reach reckon server at 127.0.0.1:1"), std::string::npos)
      << run.err;
  const Outcome bad = Reckon({"show", "x", "--server", "localhost"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("is not HOST:PORT"), std::string::npos) << bad.err;
}

// Identifiers are checked before anything is sent: nothing listens at 127.0.0.1:1, so a
// command that tried to connect would fail with exit code 1 instead.
TEST_F(CliTest, BadIdentifiersAreRefusedBeforeAnythingIsSent) {
  const std::string server = "127.0.0.1:1";
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"start", "a\\b", "--type", "t"}, "reckon start: workflow id 'a\\x5cb' is not valid"},
      {{"start", "a\nb", "--type", "t"},
       "reckon start: workflow id 'a\\x0ab' is not valid: it contains a newline (0x0a) at byte 1"},
      {{"start", std::string(100 * 1024, 'w'), "--type", "t"}, "it is 102400 bytes long"},
      {{"start", "w-1", "--type", "bad\xfftype"},
       "reckon start: --type 'bad\\xfftype' is not valid: it is not valid UTF-8"},
      {{"signal", "w-1", "has space"},
       "reckon signal: signal name 'has space' is not valid: it contains a space at byte 3"},
      {{"cancel", "w-1", "--reason", "two\nlines"},
       "reckon cancel: --reason 'two\\x0alines' is not valid"},
      {{"show", ""}, "reckon show: workflow id is empty"},
      {{"history", "_x"}, "reckon history: workflow id '_x' is not valid: it starts with '_'"},
      {{"trace", "x\x01"}, "reckon trace: workflow id 'x\\x01' is not valid"},
  };
  for (Case c : cases) {
    c.args.push_back("--server");
    c.args.push_back(server);
    const Outcome run = Reckon(c.args);
    EXPECT_EQ(run.exit_code, 2) << c.args[0] << ": " << run.err;
    EXPECT_NE(run.err.find(c.message), std::string::npos) << run.err;
    EXPECT_EQ(run.err.find("cannot reach"), std::string::npos) << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << "one line: " << run.err;
  }
}

// A plan that carries a value for a secret field is refused by `plan validate` (and `plan
// run`, which validates first), naming the step, the tool and the field, never the value.
TEST_F(CliTest, APlanWithASecretValueIsRefused) {
  const std::string plan = (dir_ / "secret.json").string();
  std::ofstream(plan) << R"({"plan_id": "p-1", "steps": [{"id": "refund", "tool": "send_refund",
      "input": {"payment_id": "pay-1", "amount_cents": 100, "reason": "r",
                "card_token": "tok_cli_canary_77"}}]})";
  const Outcome run = Reckon({"plan", "validate", "--contracts", kRefundContracts, plan});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("step 'refund': input.card_token: 'card_token' is a secret field of "
                         "tool 'send_refund', and a plan may not carry a value for it: secrets "
                         "come from the worker's side"),
            std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("tok_cli_canary_77"), std::string::npos) << run.err;
  EXPECT_EQ(run.out.find("tok_cli_canary_77"), std::string::npos) << run.out;
}


// `reckon admin archive` on a real journal file: old finished runs go to the archive and leave
// the journal, a running run stays; --list reads the archive back; a bad age is refused.
TEST_F(CliTest, AdminArchiveMovesOldFinishedRunsAndListsThem) {
  const std::string journal = (dir_ / "j.db").string();
  {
    auto opened = storage::OpenSqliteJournal(journal);
    ASSERT_TRUE(opened) << opened.error().ToString();
    for (const char* id : {"old-1", "old-2", "still-running"}) {
      storage::AppendRequest start;
      start.run = {id, "r1"};
      start.now_us = 1000;  // 1970: older than any age
      start.workflow_type = "refund";
      start.events = {storage::WorkflowStarted{"refund", "{}", ""}};
      ASSERT_TRUE(opened.value()->Append(start));
      if (std::string(id) == "still-running") continue;
      storage::AppendRequest end;
      end.run = start.run;
      end.expected_next_seq = 2;
      end.now_us = 1000;
      end.events = {storage::WorkflowCompleted{"{}"}};
      end.status = storage::RunStatus::kCompleted;
      ASSERT_TRUE(opened.value()->Append(end));
    }
  }
  const std::string archive = (dir_ / "a.jsonl.gz").string();
  const Outcome bad = Reckon({"admin", "archive", journal, "--older-than", "soon", "--out", archive});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--older-than 'soon' is not an age"), std::string::npos) << bad.err;

  const Outcome run = Reckon({"admin", "archive", journal, "--older-than", "1h", "--out", archive});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "archived old-1 r1 completed 2 events\n"
                     "archived old-2 r1 completed 2 events\n"
                     "2 run(s) archived to " + archive + " and deleted from the journal\n");
  const Outcome again = Reckon({"admin", "archive", journal, "--older-than", "1h", "--out",
                                (dir_ / "b.jsonl.gz").string()});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("nothing to archive"), std::string::npos) << again.out;

  const Outcome list = Reckon({"admin", "archive", "--list", archive});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("format version 1"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("old-1  r1  refund  completed  2 events"), std::string::npos) << list.out;
  const Outcome events = Reckon({"admin", "archive", "--list", archive, "--workflow", "old-2"});
  ASSERT_EQ(events.exit_code, 0) << events.err;
  EXPECT_NE(events.out.find("  1  WorkflowStarted"), std::string::npos) << events.out;
  EXPECT_NE(events.out.find("  2  WorkflowCompleted"), std::string::npos) << events.out;
  EXPECT_EQ(events.out.find("old-1"), std::string::npos) << events.out;

  auto reopened = storage::OpenSqliteJournal(journal);
  ASSERT_TRUE(reopened);
  auto runs = reopened.value()->ListRuns();
  ASSERT_TRUE(runs);
  ASSERT_EQ(runs.value().size(), 1u);
  EXPECT_EQ(runs.value()[0].ref.workflow_id, "still-running");
}


// `reckon server --retention` takes an age, and refuses anything else before opening anything.
TEST_F(CliTest, ServerRetentionTakesAnAge) {
  const std::string journal = (dir_ / "never.db").string();
  const Outcome run = Reckon({"server", "--journal", journal, "--retention", "3 days"});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("--retention '3 days' is not an age"), std::string::npos) << run.err;
  EXPECT_FALSE(std::filesystem::exists(journal));
}

}  // namespace
}  // namespace reckon
