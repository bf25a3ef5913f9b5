// History pages (docs/PROTOCOL.md, "History pages") through the real `reckon server` with a
// page budget of 256 bytes, so that a ledger run (host/testing/test_workflows.h) of a few
// updates spans many pages:
//   - real workers (reckon-test-worker): a query answered from a paged full history, then the
//     worker SIGKILLed and a new one started, which replays the paged full history and
//     finishes the run with the right total;
//   - a worker speaking the protocol by hand: an event larger than the budget travels alone in
//     its page, pages follow each other seq by seq, bad and foreign page tokens are refused,
//     a token of a task the connection no longer holds is not_found, and a worker that
//     disconnects halfway through the pages leaves the task to the next worker, which
//     completes the run.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include <fstream>
#include <sstream>

#include "reckon/protocol/client.h"
#include "reckon/protocol/credentials.h"
#include "tests/support/reckon_server.h"

namespace reckon::api {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;
using testing::CliRun;
using testing::Eventually;
using testing::ReckonServer;

constexpr std::size_t kPageBytes = 256;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A worker connection driven by hand, one request at a time: its own io_context, run until
// each reply arrives.
class HandWorker {
 public:
  static Result<std::unique_ptr<HandWorker>> Connect(const std::string& address,
                                                     const std::string& token_file) {
    auto worker = std::unique_ptr<HandWorker>(new HandWorker());
    RECKON_TRY(std::string token, ReadTokenFile(token_file));
    ClientOptions options;
    options.token = token;
    std::optional<Result<std::shared_ptr<Client>>> connected;
    auto connect = [&]() -> asio::awaitable<void> {
      auto op = Client::Connect(worker->io_.get_executor(), address, options);
      connected.emplace(co_await std::move(op));
    };
    asio::co_spawn(worker->io_, connect(), asio::detached);
    while (!connected) worker->io_.run_one();
    RECKON_TRY(worker->client_, std::move(*connected));
    return worker;
  }

  ~HandWorker() { Close(); }

  Result<Reply> Call(std::unique_ptr<capnp::MallocMessageBuilder> message) {
    std::optional<Result<Reply>> reply;
    auto call = [&]() -> asio::awaitable<void> {
      auto op = client_->Call(std::move(message), 20s);
      reply.emplace(co_await std::move(op));
    };
    asio::co_spawn(io_, call(), asio::detached);
    while (!reply) io_.run_one();
    return std::move(*reply);
  }

  Result<Reply> Register(const std::string& worker_id, const std::string& type) {
    auto message = Request();
    auto r = message->getRoot<wire::Request>().initMethod().initRegisterWorker();
    r.setWorkerId(worker_id);
    r.initWorkflowTypes(1).set(0, type);
    return Call(std::move(message));
  }

  Result<Reply> Poll() {
    auto message = Request();
    message->getRoot<wire::Request>().initMethod().initPollWorkflowTask().setWaitMs(10000);
    return Call(std::move(message));
  }

  Result<Reply> Page(std::uint64_t task_token, kj::ArrayPtr<const capnp::byte> page_token) {
    auto message = Request();
    auto get = message->getRoot<wire::Request>().initMethod().initGetWorkflowTaskPage();
    get.setTaskToken(task_token);
    get.setPageToken(page_token);
    return Call(std::move(message));
  }

  void Close() {
    if (!client_) return;
    client_->Close();
    client_.reset();
    io_.poll();  // let the connection's coroutines see the close
  }

  static std::unique_ptr<capnp::MallocMessageBuilder> Request() {
    auto message = std::make_unique<capnp::MallocMessageBuilder>();
    message->initRoot<wire::Request>();
    return message;
  }

 private:
  HandWorker() = default;
  asio::io_context io_;
  std::shared_ptr<Client> client_;
};

class ServerPagingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = ReckonServer::Start(
        RECKON_CLI_PATH, {"--history-page-bytes", std::to_string(kPageBytes)});
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(server).value();
  }

  CliRun Cli(std::vector<std::string> args) { return server_->Cli(std::move(args)); }

  std::string Show(const std::string& id, const std::string& field) {
    const CliRun shown = Cli({"show", id, "--json"});
    if (shown.code() != 0) return shown.Describe();
    return json::serialize(json::parse(shown.out).at(field));
  }

  // A ledger run with a long history on worker `worker`: an input larger than a page, `adds`
  // updates (n = 1, 2, ...), and a signal "note" whose payload is larger than a page, which
  // nothing awaits (it is journaled and stays buffered). Waits on signal "stop" at the end.
  void LongLedger(const std::string& id, int adds) {
    json::object input{{"memo", std::string(3 * kPageBytes, 'm')}};
    const CliRun started = server_->StartWorkflow(id, "ledger", json::serialize(input));
    ASSERT_EQ(started.code(), 0) << started.Describe();
    ASSERT_TRUE(Eventually([&] { return Show(id, "waits_on") == "\"signal\""; }))
        << Cli({"show", id}).out;
    for (int n = 1; n <= adds; ++n) {
      const CliRun added = Cli({"update", id, "add", "{\"n\": " + std::to_string(n) + "}"});
      ASSERT_EQ(added.code(), 0) << added.Describe();
    }
    json::object note{{"text", std::string(2 * kPageBytes, 'n')}};
    const CliRun noted = Cli({"signal", id, "note", "--payload", json::serialize(note)});
    ASSERT_EQ(noted.code(), 0) << noted.Describe();
  }

  std::size_t HistoryEvents(const std::string& id) {
    const CliRun history = Cli({"history", id, "--json"});
    EXPECT_EQ(history.code(), 0) << history.Describe();
    return history.code() == 0 ? json::parse(history.out).as_array().size() : 0;
  }

  // The workflow tasks of run `id` the server delivered in pages so far (its log says so).
  int PagedTasks(const std::string& id) {
    const std::string log = ReadFile(server_->dir().File("server.log"));
    const std::string line = " of '" + id + "': ";
    int paged = 0;
    for (std::size_t at = log.find(line); at != std::string::npos; at = log.find(line, at + 1)) {
      const std::size_t end = log.find('\n', at);
      if (log.substr(at, end - at).find("the rest in pages") != std::string::npos) ++paged;
    }
    return paged;
  }

  int Committed(const std::string& id) {
    const CliRun history = Cli({"history", id, "--json"});
    EXPECT_EQ(history.code(), 0) << history.Describe();
    if (history.code() != 0) return -1;
    const json::value events = json::parse(history.out);
    int committed = 0;
    for (const json::value& event : events.as_array()) {
      if (event.at("type") == "OperationCommitted") ++committed;
    }
    return committed;
  }

  void ExpectCompletedWithTotal(const std::string& id, std::int64_t total) {
    ASSERT_TRUE(Eventually([&] { return Show(id, "status") == "\"completed\""; }))
        << Cli({"show", id}).out;
    const CliRun shown = Cli({"show", id, "--json"});
    ASSERT_EQ(shown.code(), 0) << shown.Describe();
    EXPECT_NE(shown.out.find("\\\"total\\\":" + std::to_string(total)), std::string::npos)
        << shown.out;
  }

  std::unique_ptr<ReckonServer> server_;
};

TEST_F(ServerPagingTest, APagedHistoryIsReplayedByANewWorkerAfterACrash) {
  ASSERT_TRUE(server_->StartWorker(RECKON_TEST_WORKER, "first"));
  LongLedger("paged-1", 4);
  const std::size_t events = HistoryEvents("paged-1");
  EXPECT_GT(events, 20u);

  // A query: a task of its own carrying the full history, in pages. (Each update's validation
  // was one too.)
  const int paged = PagedTasks("paged-1");
  EXPECT_GE(paged, 4);
  const CliRun total = Cli({"query", "paged-1", "total"});
  ASSERT_EQ(total.code(), 0) << total.Describe();
  EXPECT_EQ(total.out, "{\"total\":10}\n");
  EXPECT_EQ(PagedTasks("paged-1"), paged + 1) << "the query's history came in one page";

  // A crash: the new worker has nothing cached and rebuilds the run from the paged history.
  ASSERT_TRUE(server_->KillWorker("first"));
  ASSERT_TRUE(server_->StartWorker(RECKON_TEST_WORKER, "second"));
  ASSERT_TRUE(Eventually([&] { return Cli({"signal", "paged-1", "stop"}).code() == 0; }));
  ExpectCompletedWithTotal("paged-1", 10);
  EXPECT_GT(PagedTasks("paged-1"), paged + 1) << "the replay's history came in one page";
  // Nothing stored was harmed: each charge committed once, the history only grew.
  EXPECT_GT(HistoryEvents("paged-1"), events);
  EXPECT_EQ(Committed("paged-1"), 4);
}

TEST_F(ServerPagingTest, PagesByHandTokensAndADisconnectHalfwayThrough) {
  ASSERT_TRUE(server_->StartWorker(RECKON_TEST_WORKER, "first"));
  LongLedger("paged-2", 3);
  const std::size_t events = HistoryEvents("paged-2");
  ASSERT_TRUE(server_->KillWorker("first"));

  // A worker by hand takes the run's next task: the full history, in pages.
  auto hand = HandWorker::Connect(server_->address(), server_->TokenFile("worker"));
  ASSERT_TRUE(hand) << hand.error().ToString();
  ASSERT_TRUE(hand.value()->Register("by-hand", "ledger"));
  // The signal's reply waits for the run's batch, so it goes from a process of its own.
  auto stop = server_->StartCli({"signal", "paged-2", "stop"});
  ASSERT_TRUE(stop) << stop.error().ToString();
  auto polled = hand.value()->Poll();
  ASSERT_TRUE(polled) << polled.error().ToString();
  ASSERT_TRUE(polled.value().get().getResult().isWorkflowTask());
  auto task = polled.value().get().getResult().getWorkflowTask();
  const std::uint64_t token = task.getTaskToken();
  EXPECT_TRUE(task.getFullHistory());
  // WorkflowStarted, with an input over the budget, alone in the first page.
  ASSERT_EQ(task.getEvents().size(), 1u);
  EXPECT_EQ(task.getEvents()[0].getSeq(), 1);
  EXPECT_EQ(std::string(task.getEvents()[0].getType().cStr()), "WorkflowStarted");
  EXPECT_GT(task.getEvents()[0].getPayload().size(), kPageBytes);
  ASSERT_NE(task.getNextPageToken().size(), 0u);
  auto first_token = kj::heapArray<capnp::byte>(task.getNextPageToken());

  // Bad tokens change nothing.
  const capnp::byte garbage[] = {1, 2, 3};
  auto bad = hand.value()->Page(token, kj::arrayPtr(garbage, sizeof garbage));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), Errc::kInvalidArgument) << bad.error().ToString();
  auto foreign = kj::heapArray<capnp::byte>(first_token.asPtr());
  foreign[4] ^= 0xff;  // names another task
  auto other = hand.value()->Page(token, foreign.asPtr());
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().code(), Errc::kInvalidArgument) << other.error().ToString();
  EXPECT_NE(other.error().message().find("another workflow task"), std::string::npos);
  auto unknown = hand.value()->Page(token + 1000, first_token.asPtr());
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), Errc::kNotFound) << unknown.error().ToString();

  // Every page, in order: seqs follow each other, pages stay within the budget unless one
  // event alone is larger, and together they are the whole history.
  std::int64_t last_seq = 1;
  int pages = 1;
  int alone = 0;  // pages of the note signal, larger than a page
  auto next = kj::heapArray<capnp::byte>(first_token.asPtr());
  while (next.size() != 0) {
    auto page = hand.value()->Page(token, next.asPtr());
    ASSERT_TRUE(page) << page.error().ToString();
    auto body = page.value().get().getResult().getWorkflowTaskPage();
    ASSERT_GT(body.getEvents().size(), 0u);
    std::size_t payload = 0;
    for (auto event : body.getEvents()) {
      EXPECT_EQ(event.getSeq(), last_seq + 1);
      last_seq = event.getSeq();
      payload += event.getPayload().size();
    }
    for (auto event : body.getEvents()) {
      if (std::string(event.getType().cStr()) == "SignalReceived" &&
          event.getPayload().size() > 2 * kPageBytes) {
        EXPECT_EQ(body.getEvents().size(), 1u) << "the note signal shares its page";
        ++alone;
      }
    }
    if (body.getEvents().size() > 1) {
      EXPECT_LE(payload, kPageBytes);
    }
    next = kj::heapArray<capnp::byte>(body.getNextPageToken());
    ++pages;
  }
  EXPECT_GT(pages, 10);
  EXPECT_EQ(alone, 1) << "the note signal is not in the history";
  EXPECT_GE(static_cast<std::size_t>(last_seq), events);
  // A page may be read again while the task is held (a retried request).
  auto again = hand.value()->Page(token, first_token.asPtr());
  ASSERT_TRUE(again) << again.error().ToString();
  EXPECT_EQ(again.value().get().getResult().getWorkflowTaskPage().getEvents()[0].getSeq(), 2);

  // A second delivery, dropped halfway through its pages: the connection closes.
  hand.value()->Close();
  auto second = HandWorker::Connect(server_->address(), server_->TokenFile("worker"));
  ASSERT_TRUE(second) << second.error().ToString();
  ASSERT_TRUE(second.value()->Register("by-hand-2", "ledger"));
  auto repolled = second.value()->Poll();
  ASSERT_TRUE(repolled) << repolled.error().ToString();
  ASSERT_TRUE(repolled.value().get().getResult().isWorkflowTask());
  auto retask = repolled.value().get().getResult().getWorkflowTask();
  EXPECT_NE(retask.getTaskToken(), token) << "a task back in its queue has a new token";
  auto stale = second.value()->Page(token, first_token.asPtr());
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().code(), Errc::kNotFound) << stale.error().ToString();
  auto half = second.value()->Page(retask.getTaskToken(), retask.getNextPageToken());
  ASSERT_TRUE(half) << half.error().ToString();
  second.value()->Close();

  // The next worker gets it all and finishes the run; nothing was lost or done twice.
  ASSERT_TRUE(server_->StartWorker(RECKON_TEST_WORKER, "last"));
  ExpectCompletedWithTotal("paged-2", 6);
  auto signalled = stop.value().WaitFor(30s);
  ASSERT_TRUE(signalled) << signalled.error().ToString();
  EXPECT_TRUE(signalled.value().Succeeded()) << signalled.value().ToString();
  EXPECT_EQ(Committed("paged-2"), 3);
}

}  // namespace
}  // namespace reckon::api
