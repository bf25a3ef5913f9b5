// The real `reckon server` binary over real TCP on 127.0.0.1: round trips through the client,
// error replies that name the problem, many requests in flight on one connection, and frames
// that are malformed, truncated or oversized, each of which closes only its own connection;
// and, with a worker connected, `reckon show` and `list` saying what each run waits on.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/json.hpp>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <map>
#include <thread>

#include "reckon/protocol/client.h"
#include "reckon/contract/contract_json.h"
#include "reckon/contract/testing/test_contracts.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"
#include "reckon/worker/remote_worker.h"
#include "reckon/testkit/fake_provider.h"
#include "reckon/host/testing/fast_contracts.h"
#include "reckon/host/testing/test_workflows.h"

namespace reckon::api {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using testing::Subprocess;
using testing::SubprocessOptions;
using testing::TempDir;

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SubprocessOptions options;
    // Transport tests: credentials are tested elsewhere (authz_test.cc), so the server runs
    // in loopback development mode, where requests without a token are accepted.
    options.args = {"server",      "--journal", dir_.File("journal.db"), "--listen",
                    "127.0.0.1:0", "--port-file", dir_.File("port"),      "--quiet",
                    "--insecure-dev"};
    options.stderr_path = dir_.File("server.log");
    auto server = Subprocess::Start(RECKON_CLI_PATH, options);
    ASSERT_TRUE(server) << server.error().ToString();
    server_.emplace(std::move(server).value());
    for (int i = 0; i < 200 && port_ == 0; ++i) {
      std::ifstream file(dir_.File("port"));
      if (!(file >> port_)) std::this_thread::sleep_for(25ms);
    }
    ASSERT_NE(port_, 0) << "the server did not write its port";
    address_ = "127.0.0.1:" + std::to_string(port_);
  }

  // One request on a fresh connection.
  Result<Reply> Call(std::unique_ptr<capnp::MallocMessageBuilder> request) {
    asio::io_context io;
    std::optional<Result<Reply>> out;
    auto run = [&]() -> asio::awaitable<void> {
      auto connect = Client::Connect(io.get_executor(), address_);
      auto client = co_await std::move(connect);
      if (!client) {
        out.emplace(client.error());
        co_return;
      }
      auto call = client.value()->Call(std::move(request), 5s);
      out.emplace(co_await std::move(call));
      client.value()->Close();
    };
    asio::co_spawn(io, run(), asio::detached);
    io.run();
    return std::move(*out);
  }

  static std::unique_ptr<capnp::MallocMessageBuilder> Request() {
    auto message = std::make_unique<capnp::MallocMessageBuilder>();
    message->initRoot<wire::Request>();
    return message;
  }

  // Connects a raw socket, sends `bytes`, and reports whether the server closed the
  // connection within 3 s (true) or kept it open (false). What the server sends before closing
  // (its close reason, docs/PROTOCOL.md) is read and dropped.
  bool ServerClosesAfter(const std::vector<unsigned char>& bytes, bool half_close = false) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port_);
    ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
    if (half_close) ::shutdown(fd, SHUT_WR);
    pollfd p{fd, POLLIN, 0};
    bool closed = false;
    const auto deadline = std::chrono::steady_clock::now() + 3s;
    while (!closed && std::chrono::steady_clock::now() < deadline && ::poll(&p, 1, 3000) == 1) {
      char buffer[4096];
      closed = ::recv(fd, buffer, sizeof buffer, 0) <= 0;
    }
    ::close(fd);
    return closed;
  }

  TempDir dir_;
  std::optional<Subprocess> server_;
  std::uint16_t port_ = 0;
  std::string address_;
};

std::vector<unsigned char> Le32(std::uint32_t a, std::uint32_t b) {
  std::vector<unsigned char> out(8);
  std::memcpy(out.data(), &a, 4);
  std::memcpy(out.data() + 4, &b, 4);
  return out;
}

TEST_F(ServerTest, RoundTripsAndErrorsThatNameTheProblem) {
  auto list = Request();
  list->getRoot<wire::Request>().initMethod().initListWorkflows();
  auto listed = Call(std::move(list));
  ASSERT_TRUE(listed) << listed.error().ToString();
  EXPECT_EQ(listed.value().get().getResult().getWorkflows().size(), 0u);

  auto start = Request();
  auto s = start->getRoot<wire::Request>().initMethod().initStartWorkflow();
  s.setWorkflowId("w-1");
  s.setWorkflowType("nope");
  s.setInputJson("{}");
  auto started = Call(std::move(start));
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().code(), Errc::kFailedPrecondition);
  EXPECT_NE(started.error().message().find("no connected worker hosts workflow type 'nope'"),
            std::string::npos) << started.error().message();

  auto bad_json = Request();
  auto b = bad_json->getRoot<wire::Request>().initMethod().initStartWorkflow();
  b.setWorkflowId("w-1");
  b.setWorkflowType("nope");
  b.setInputJson("{not json");
  auto refused = Call(std::move(bad_json));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::kInvalidArgument);
  EXPECT_NE(refused.error().message().find("inputJson is not valid JSON"), std::string::npos);

  auto describe = Request();
  describe->getRoot<wire::Request>().initMethod().initDescribeWorkflow().setWorkflowId("ghost");
  auto described = Call(std::move(describe));
  ASSERT_FALSE(described);
  EXPECT_EQ(described.error().code(), Errc::kNotFound);
  EXPECT_NE(described.error().message().find("no workflow 'ghost'"), std::string::npos);

  auto poll = Request();
  poll->getRoot<wire::Request>().initMethod().initPollToolTask().setWaitMs(10);
  auto polled = Call(std::move(poll));
  ASSERT_FALSE(polled);
  EXPECT_EQ(polled.error().code(), Errc::kFailedPrecondition);
  EXPECT_NE(polled.error().message().find("send registerWorker first"), std::string::npos);
}

TEST_F(ServerTest, AContractNeverChangesUnderItsToolName) {
  auto declare = [&](const ToolContract& contract) {
    auto message = Request();
    auto reg = message->getRoot<wire::Request>().initMethod().initRegisterWorker();
    reg.setWorkerId("w");
    auto tools = reg.initTools(1);
    tools[0].setName(contract.name);
    tools[0].setContractJson(boost::json::serialize(ContractToJson(contract)));
    return Call(std::move(message));
  };
  ToolContract contract = testing_contracts::Payout();
  ASSERT_TRUE(declare(contract));
  ASSERT_TRUE(declare(contract)) << "the same contract again is fine";
  ToolContract changed = contract;
  changed.retry.max_attempts += 1;
  auto refused = declare(changed);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::kFailedPrecondition);
  EXPECT_NE(refused.error().message().find("give the new contract a new tool name"),
            std::string::npos) << refused.error().message();

  auto contracts = Request();
  contracts->getRoot<wire::Request>().initMethod().setListContracts();
  auto listed = Call(std::move(contracts));
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed.value().get().getResult().getContracts().size(), 1u);
  EXPECT_EQ(std::string(listed.value().get().getResult().getContracts()[0].getName().cStr()),
            contract.name);
}

struct Tally {
  int answered = 0;
  int errors = 0;
  int done = 0;
};

// A coroutine function, not a lambda in a loop: its arguments live in its own frame.
asio::awaitable<void> ListOnce(std::shared_ptr<Client> client, Tally* tally, int total) {
  auto message = std::make_unique<capnp::MallocMessageBuilder>();
  message->initRoot<wire::Request>().initMethod().initListWorkflows();
  auto call = client->Call(std::move(message), 10s);
  auto reply = co_await std::move(call);
  if (reply && reply.value().get().getResult().isWorkflows()) {
    ++tally->answered;
  } else {
    ++tally->errors;
  }
  if (++tally->done == total) client->Close();
}

TEST_F(ServerTest, ManyRequestsInFlightOnOneConnection) {
  constexpr int kRequests = 300;
  asio::io_context io;
  Tally tally;
  auto run = [&]() -> asio::awaitable<void> {
    auto connect = Client::Connect(io.get_executor(), address_);
    auto client = co_await std::move(connect);
    if (!client) co_return;
    for (int i = 0; i < kRequests; ++i) {
      asio::co_spawn(io, ListOnce(client.value(), &tally, kRequests), asio::detached);
    }
  };
  asio::co_spawn(io, run(), asio::detached);
  io.run_for(20s);
  EXPECT_EQ(tally.answered, kRequests);
  EXPECT_EQ(tally.errors, 0);
}

TEST_F(ServerTest, BadFramesCloseOnlyTheirOwnConnection) {
  // A healthy connection that must survive everything below.
  asio::io_context io;
  std::shared_ptr<Client> healthy;
  auto connect = [&]() -> asio::awaitable<void> {
    auto c = Client::Connect(io.get_executor(), address_);
    auto client = co_await std::move(c);
    if (client) healthy = client.value();
  };
  asio::co_spawn(io, connect(), asio::detached);
  // The client's read loop keeps the context busy: run only until connected.
  for (int i = 0; i < 1000 && !healthy; ++i) io.run_one_for(10ms);
  ASSERT_TRUE(healthy);

  // 100,000 segments: refused from the header.
  EXPECT_TRUE(ServerClosesAfter(Le32(99999, 1)));
  // One segment of 2^28 words (2 GiB): over the size limit, refused before any allocation.
  EXPECT_TRUE(ServerClosesAfter(Le32(0, 1u << 28)));
  // A well-framed message whose root pointer points outside its segment.
  auto garbage = Le32(0, 1);
  const std::uint64_t bad_pointer = (std::uint64_t{1000} << 2) | (std::uint64_t{1} << 32);
  garbage.resize(16);
  std::memcpy(garbage.data() + 8, &bad_pointer, 8);
  EXPECT_TRUE(ServerClosesAfter(garbage));
  // Truncated: the header promises 10 words, 3 arrive, then the client stops sending.
  auto truncated = Le32(0, 10);
  truncated.resize(8 + 24, 0);
  EXPECT_TRUE(ServerClosesAfter(truncated, /*half_close=*/true));
  // An empty first segment.
  EXPECT_TRUE(ServerClosesAfter(Le32(0, 0)));

  // The healthy connection still gets answers, and the server is still running.
  std::optional<Result<Reply>> reply;
  auto ask = [&]() -> asio::awaitable<void> {
    auto message = Request();
    message->getRoot<wire::Request>().initMethod().setListContracts();
    auto call = healthy->Call(std::move(message), 5s);
    reply.emplace(co_await std::move(call));
    healthy->Close();
  };
  asio::co_spawn(io, ask(), asio::detached);
  for (int i = 0; i < 1000 && !reply; ++i) io.run_one_for(10ms);
  ASSERT_TRUE(reply && reply->has_value()) << (reply ? reply->error().ToString() : "no reply");
  EXPECT_TRUE(server_->running());
  std::ifstream log(dir_.File("server.log"));
  std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("segments; the limit is 64"), std::string::npos) << text;
  EXPECT_NE(text.find("exceeds the limit of"), std::string::npos) << text;
  EXPECT_NE(text.find("malformed request"), std::string::npos) << text;
}


// --- what runs wait on, through the real server and the real CLI ---------------------------------

// Waits for the signal "approved"; completes with its payload.
reckon::Task<WorkflowOutcome> AwaitApproved(WorkflowContext& ctx, boost::json::value) {
  std::string payload = co_await ctx.WaitSignal("approved");
  co_return boost::json::object{{"payload", payload}};
}

// co_spawn needs a default-constructible result; Result<void> is not.
asio::awaitable<void> RunWorker(RemoteWorker* worker) {
  auto ran = co_await worker->Run();
  EXPECT_TRUE(ran) << ran.error().ToString();
}

// A RemoteWorker on a thread of its own, connected to the server under test. It hosts
// AwaitApproved and CallOnce, with "approved_charge", a tool every call of which needs approval.
class WorkerThread {
 public:
  explicit WorkerThread(const std::string& address, std::size_t max_cached_runs = 10000) {
    ToolContract charge = testing::FastContract("approved_charge", SideEffect::kNonRepeatableWrite);
    charge.approval.kind = ApprovalKind::kAlways;
    charge.approval.grant_ttl = std::chrono::hours(1);
    EXPECT_TRUE(tools_.Register(testkit::ProviderTool(std::move(charge), provider_)));
    EXPECT_TRUE(workflows_.Register("await_approved", AwaitApproved));
    EXPECT_TRUE(workflows_.Register(testing::kCallOnce, testing::CallOnce));
    RemoteWorkerOptions options;
    options.server = address;
    options.worker_id = "waits-test";
    options.poll_wait = 200ms;
    options.max_cached_runs = max_cached_runs;
    worker_ = std::make_unique<RemoteWorker>(io_.get_executor(), workflows_, tools_, options);
    asio::co_spawn(io_, RunWorker(worker_.get()), asio::detached);
    thread_ = std::thread([this] { io_.run(); });
  }
  ~WorkerThread() {
    asio::post(io_, [this] {
      worker_->Stop();
      io_.stop();
    });
    thread_.join();
  }

 private:
  testkit::FakeProvider provider_;
  ToolRegistry tools_;
  WorkflowRegistry workflows_;
  asio::io_context io_;
  std::unique_ptr<RemoteWorker> worker_;
  std::thread thread_;
};

// `reckon ARGS... --server ADDRESS`: its standard output, once it exited 0.
std::string Cli(const std::string& address, std::vector<std::string> args) {
  SubprocessOptions options;
  options.args = std::move(args);
  options.args.insert(options.args.end(), {"--server", address});
  auto cli = Subprocess::Start(RECKON_CLI_PATH, options);
  EXPECT_TRUE(cli) << cli.error().ToString();
  if (!cli) return "";
  auto out = cli.value().ReadAll(30s);
  auto status = cli.value().WaitFor(10s);
  EXPECT_TRUE(status && status.value().Succeeded()) << (out ? out.value() : "");
  return out ? out.value() : "";
}

// A worker whose cache holds two runs gets a third: the run whose task came longest ago is
// evicted, its next task (only the new events) is refused as not cached, the server resends its
// full history, and every run still completes.
TEST_F(ServerTest, ARunEvictedFromAFullWorkerCacheIsRebuiltFromItsFullHistory) {
  WorkerThread worker(address_, /*max_cached_runs=*/2);
  auto start = [&](const std::string& id) {
    for (int i = 0; i < 400; ++i) {  // until the worker has registered its types
      auto message = Request();
      auto s = message->getRoot<wire::Request>().initMethod().initStartWorkflow();
      s.setWorkflowId(id);
      s.setWorkflowType("await_approved");
      s.setInputJson("{}");
      auto started = Call(std::move(message));
      if (started || started.error().code() != Errc::kFailedPrecondition) return started.has_value();
      std::this_thread::sleep_for(25ms);
    }
    return false;
  };
  auto field = [&](const std::string& id, bool status) {
    auto message = Request();
    message->getRoot<wire::Request>().initMethod().initDescribeWorkflow().setWorkflowId(id);
    auto described = Call(std::move(message));
    if (!described) return std::string();
    auto summary = described.value().get().getResult().getWorkflow().getSummary();
    return std::string(status ? summary.getStatus().cStr() : summary.getWaitsOn().cStr());
  };
  auto until = [&](const std::string& id, bool status, const std::string& want) {
    for (int i = 0; i < 400 && field(id, status) != want; ++i) std::this_thread::sleep_for(25ms);
    return field(id, status);
  };
  const std::vector<std::string> ids = {"evict-1", "evict-2", "evict-3"};
  for (const auto& id : ids) {
    ASSERT_TRUE(start(id));
    ASSERT_EQ(until(id, false, "signal"), "signal") << id;  // activated, so cached in turn
  }
  for (const auto& id : ids) {
    auto message = Request();
    auto signal = message->getRoot<wire::Request>().initMethod().initSignalWorkflow();
    signal.setWorkflowId(id);
    signal.setName("approved");
    signal.setPayloadJson(R"("yes")");
    ASSERT_TRUE(Call(std::move(message)));
  }
  for (const auto& id : ids) EXPECT_EQ(until(id, true, "completed"), "completed") << id;
}

TEST_F(ServerTest, ShowAndListSayWhatEachRunWaitsOn) {
  WorkerThread worker(address_);
  auto start = [&](const std::string& id, const std::string& type, const std::string& input) {
    for (int i = 0; i < 400; ++i) {  // until the worker has registered its types
      auto message = Request();
      auto s = message->getRoot<wire::Request>().initMethod().initStartWorkflow();
      s.setWorkflowId(id);
      s.setWorkflowType(type);
      s.setInputJson(input);
      auto started = Call(std::move(message));
      if (started || started.error().code() != Errc::kFailedPrecondition) return started.has_value();
      std::this_thread::sleep_for(25ms);
    }
    return false;
  };
  // Until the run's wait, as the server describes it, is no longer "working".
  auto settled = [&](const std::string& id) {
    for (int i = 0; i < 400; ++i) {
      auto message = Request();
      message->getRoot<wire::Request>().initMethod().initDescribeWorkflow().setWorkflowId(id);
      auto described = Call(std::move(message));
      if (described) {
        auto summary = described.value().get().getResult().getWorkflow().getSummary();
        if (std::string(summary.getWaitsOn().cStr()) != "working") {
          return std::string(summary.getWaitsOn().cStr());
        }
      }
      std::this_thread::sleep_for(25ms);
    }
    return std::string("still working");
  };
  ASSERT_TRUE(start("sig-1", "await_approved", "{}"));
  ASSERT_TRUE(start("pay-1", testing::kCallOnce,
                    R"({"tool": "approved_charge", "input": {"account": "acct-1", "amount_cents": 900}})"));
  ASSERT_EQ(settled("sig-1"), "signal");
  ASSERT_EQ(settled("pay-1"), "approval");

  EXPECT_NE(Cli(address_, {"show", "sig-1"}).find("waits on  signal 'approved'\n"),
            std::string::npos);
  const std::string pay = Cli(address_, {"show", "pay-1"});
  const std::string approve = "reckon approve pay-1 --operation ";
  const auto at = pay.find(approve);
  ASSERT_NE(at, std::string::npos) << pay;
  const auto from = at + approve.size();
  const std::string op = pay.substr(from, pay.find(' ', from) - from);
  ASSERT_EQ(op.rfind("op_", 0), 0u) << pay;
  EXPECT_NE(pay.find("waits on  approval of " + op + "\n"), std::string::npos) << pay;

  const std::string list = Cli(address_, {"list"});
  EXPECT_NE(list.find("WAITS ON"), std::string::npos) << list;
  EXPECT_NE(list.find("signal 'approved'\n"), std::string::npos) << list;
  EXPECT_NE(list.find("approval of " + op + "\n"), std::string::npos) << list;
  const auto listed = boost::json::parse(Cli(address_, {"list", "--json"})).as_array();
  ASSERT_EQ(listed.size(), 2u);
  std::map<std::string, std::pair<std::string, std::string>> waits;
  for (const auto& run : listed) {
    const auto& o = run.as_object();
    waits[std::string(o.at("workflow_id").as_string())] = {
        std::string(o.at("waits_on").as_string()), std::string(o.at("wait_detail").as_string())};
  }
  EXPECT_EQ(waits["sig-1"], std::make_pair(std::string("signal"), std::string("approved")));
  EXPECT_EQ(waits["pay-1"], std::make_pair(std::string("approval"), op));
}

}  // namespace
}  // namespace reckon::api
