// `reckon outbox list` on a journal with one acknowledged and one pending message, through
// the real binary.
#include <gtest/gtest.h>

#include "reckon/storage/sqlite/sqlite_journal.h"
#include "reckon/storage/sqlite/sqlite_outbox_store.h"

#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace reckon {
namespace {

using namespace std::chrono_literals;

struct Ran {
  std::string out;
  testing::ExitStatus status;
};

Ran Reckon(std::vector<std::string> args, const std::string& stderr_path) {
  testing::SubprocessOptions options;
  options.args = std::move(args);
  options.stderr_path = stderr_path;
  auto child = testing::Subprocess::Start(RECKON_CLI_PATH, options);
  EXPECT_TRUE(child) << child.error().ToString();
  if (!child) return {};
  Ran ran;
  auto out = child.value().ReadAll(30s);
  EXPECT_TRUE(out);
  if (out) ran.out = out.value();
  auto status = child.value().Wait();
  EXPECT_TRUE(status);
  if (status) ran.status = status.value();
  return ran;
}

TEST(OutboxList, ShowsAcksPendingMessagesAndTheLastError) {
  testing::TempDir dir;
  const std::string path = dir.File("journal.db");
  {
    auto journal = storage::SqliteJournal::Open(path);
    ASSERT_TRUE(journal) << journal.error().ToString();
    storage::AppendRequest request;
    request.run = {"order-1", "r1"};
    request.now_us = 5;
    request.workflow_type = "order";
    request.events = {storage::WorkflowStarted{"order", "{}", ""},
                      storage::MarkerRecorded{"publish#1", "publish", "{}"},
                      storage::MarkerRecorded{"publish#2", "publish", "{}"}};
    request.outbox = {{"msg_a", "publish#1", "orders.created", "secret-a"},
                      {"msg_b", "publish#2", "orders.paid", "secret-b"}};
    ASSERT_TRUE(journal.value()->Append(request));
    auto store = storage::SqliteOutboxStore::Open(path, nullptr);
    ASSERT_TRUE(store);
    ASSERT_TRUE(store.value()->RecordAttempt({"msg_a", 10, true, false, 7, "", 0}));
    ASSERT_TRUE(store.value()->RecordAttempt({"msg_b", 10, false, false, 0, "no ack", 900}));
  }
  const std::string err = dir.File("stderr");
  Ran all = Reckon({"outbox", "list", path}, err);
  EXPECT_TRUE(all.status.Succeeded()) << all.status.ToString();
  EXPECT_EQ(all.out,
            "msg_a  orders.created  publish#1  attempts=1  acked seq=7\n"
            "msg_b  orders.paid  publish#2  attempts=1  pending next_at_us=900  last_error: "
            "no ack\n");
  EXPECT_EQ(all.out.find("secret"), std::string::npos);  // payloads are never printed

  Ran pending = Reckon({"outbox", "list", path, "--pending", "--json"}, err);
  EXPECT_TRUE(pending.status.Succeeded());
  EXPECT_NE(pending.out.find("\"message_id\":\"msg_b\""), std::string::npos) << pending.out;
  EXPECT_EQ(pending.out.find("msg_a"), std::string::npos) << pending.out;

  Ran missing = Reckon({"outbox", "list", dir.File("none.db")}, err);
  EXPECT_EQ(missing.status.code, 2) << missing.status.ToString();
}

}  // namespace
}  // namespace reckon
