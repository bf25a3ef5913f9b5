// Who may do what, against the real `reckon server`: every protocol method with every role's
// token (and with no token, a malformed one, an unknown one, a revoked one and an expired
// one), allowed exactly when the role grants the method's permission; refusals journal
// nothing and leave an audit line; the token lifecycle; separation of duties; scopes.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include "reckon/protocol/client.h"
#include "reckon/protocol/testing/call_once.h"
#include "reckon/protocol/credentials.h"
#include "reckon/api/server/method_permission.h"
#include "reckon/auth/role.h"
#include "reckon/storage/sqlite/sqlite_journal.h"
#include "tests/support/reckon_server.h"
#include "tests/support/temp_dir.h"

namespace reckon::api {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;
using Method = wire::Request::Method;
using testing::CliRun;
using testing::ReckonServer;

using Fill = std::function<void(Method::Builder)>;

// One minimal request per method. Each either succeeds or fails for a reason after
// authorization (not_found, failed_precondition, invalid_argument): never by changing a run.
const std::vector<std::pair<Method::Which, Fill>>& EveryMethod() {
  static const auto* methods = new std::vector<std::pair<Method::Which, Fill>>{
      {Method::START_WORKFLOW,
       [](Method::Builder m) {
         auto s = m.initStartWorkflow();
         s.setWorkflowId("authz-start");
         s.setWorkflowType("no_worker_hosts_this");
         s.setInputJson("{}");
       }},
      {Method::SIGNAL_WORKFLOW,
       [](Method::Builder m) {
         auto s = m.initSignalWorkflow();
         s.setWorkflowId("authz-none");
         s.setName("go");
       }},
      {Method::CANCEL_WORKFLOW, [](Method::Builder m) { m.initCancelWorkflow().setWorkflowId("authz-none"); }},
      {Method::DESCRIBE_WORKFLOW, [](Method::Builder m) { m.initDescribeWorkflow().setWorkflowId("authz-none"); }},
      {Method::LIST_WORKFLOWS, [](Method::Builder m) { m.initListWorkflows(); }},
      {Method::GET_HISTORY, [](Method::Builder m) { m.initGetHistory().setWorkflowId("authz-none"); }},
      {Method::DECIDE_APPROVAL,
       [](Method::Builder m) {
         auto d = m.initDecideApproval();
         d.setWorkflowId("authz-none");
         d.setOperationId("op_x");
         d.setExpectedIntentHash("h");
         d.setGranted(true);
       }},
      {Method::RESOLVE_OPERATION,
       [](Method::Builder m) {
         auto r = m.initResolveOperation();
         r.setWorkflowId("authz-none");
         r.setOperationId("op_x");
       }},
      {Method::LIST_CONTRACTS, [](Method::Builder m) { m.setListContracts(); }},
      {Method::GET_TRACE, [](Method::Builder m) { m.initGetTrace().setWorkflowId("authz-none"); }},
      {Method::REGISTER_WORKER, [](Method::Builder m) { m.initRegisterWorker(); }},  // no id
      {Method::POLL_WORKFLOW_TASK, [](Method::Builder m) { m.initPollWorkflowTask(); }},
      {Method::COMPLETE_WORKFLOW_TASK, [](Method::Builder m) { m.initCompleteWorkflowTask(); }},
      {Method::GET_WORKFLOW_TASK_PAGE, [](Method::Builder m) { m.initGetWorkflowTaskPage(); }},
      {Method::POLL_TOOL_TASK, [](Method::Builder m) { m.initPollToolTask(); }},
      {Method::COMPLETE_TOOL_TASK, [](Method::Builder m) { m.initCompleteToolTask(); }},
      {Method::HEARTBEAT, [](Method::Builder m) { m.initHeartbeat(); }},
      {Method::WATCH_WORKFLOW,
       [](Method::Builder m) { m.initWatchWorkflow().setWorkflowId("authz-none"); }},
      {Method::CREATE_TOKEN, [](Method::Builder m) { m.initCreateToken(); }},  // no name
      {Method::LIST_TOKENS, [](Method::Builder m) { m.setListTokens(); }},
      {Method::REVOKE_TOKEN, [](Method::Builder m) { m.initRevokeToken().setName("nobody"); }},
      {Method::WHO_AM_I, [](Method::Builder m) { m.setWhoAmI(); }},
      {Method::LIST_WORKERS, [](Method::Builder m) { m.setListWorkers(); }},
      {Method::QUERY_WORKFLOW,
       [](Method::Builder m) {
         auto q = m.initQueryWorkflow();
         q.setWorkflowId("authz-none");
         q.setName("progress");
       }},
      {Method::UPDATE_WORKFLOW,
       [](Method::Builder m) {
         auto u = m.initUpdateWorkflow();
         u.setWorkflowId("authz-none");
         u.setName("instruct");
       }},
  };
  return *methods;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class AuthzTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = ReckonServer::Start(RECKON_CLI_PATH);
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(server).value();
  }

  std::string Token(const std::string& role) {
    auto token = ReadTokenFile(server_->TokenFile(role));
    EXPECT_TRUE(token) << token.error().ToString();
    return token ? token.value() : std::string();
  }

  // One request on a fresh connection, presenting `token` (none when empty).
  Result<Reply> Call(const std::string& token, const Fill& fill) {
    auto message = std::make_unique<capnp::MallocMessageBuilder>();
    fill(message->initRoot<wire::Request>().initMethod());
    ClientOptions options;
    options.token = token;
    return testing::CallOnce(server_->address(), std::move(options), std::move(message));
  }

  // Whether the request got past authentication and authorization.
  static bool Admitted(const Result<Reply>& reply) {
    return reply || (reply.error().code() != Errc::kUnauthenticated &&
                     reply.error().code() != Errc::kPermissionDenied);
  }

  // Every method with `token`: each refused with `code`.
  void ExpectEveryMethodRefused(const std::string& token, Errc code, const std::string& why) {
    for (const auto& [method, fill] : EveryMethod()) {
      auto reply = Call(token, fill);
      ASSERT_FALSE(reply) << MethodName(method) << " was allowed " << why;
      EXPECT_EQ(reply.error().code(), code) << MethodName(method) << " " << why << ": "
                                            << reply.error().ToString();
      EXPECT_EQ(reply.error().message().find(token.empty() ? "\x01" : token), std::string::npos)
          << "a refusal repeats the token";
    }
  }

  std::unique_ptr<ReckonServer> server_;
};

TEST_F(AuthzTest, EveryMethodIsAllowedExactlyToTheRolesThatGrantItsPermission) {
  for (const char* role_name : {"admin", "operator", "approver", "reader", "worker"}) {
    const auth::Role role = *auth::ParseRole(role_name);
    const std::string token = Token(role_name);
    for (const auto& [method, fill] : EveryMethod()) {
      auto reply = Call(token, fill);
      const auto permission = PermissionOf(method);
      const bool expected = !permission || auth::RoleGrants(role, *permission);  // whoAmI: all
      EXPECT_EQ(Admitted(reply), expected)
          << role_name << " calling " << MethodName(method) << ": "
          << (reply ? "ok" : reply.error().ToString());
      if (!expected && !reply) {
        EXPECT_EQ(reply.error().code(), Errc::kPermissionDenied);
        EXPECT_NE(reply.error().message().find(std::string("principal '") + role_name + "'"),
                  std::string::npos)
            << reply.error().message();
      }
    }
  }
  // Refusals changed nothing: the one start that was admitted found no worker, so no run exists.
  auto listed = Call(Token("reader"), [](Method::Builder m) { m.initListWorkflows(); });
  ASSERT_TRUE(listed) << listed.error().ToString();
  EXPECT_EQ(listed.value().get().getResult().getWorkflows().size(), 0u);
}

TEST_F(AuthzTest, WithoutAValidTokenEveryMethodIsRefusedAndAudited) {
  ExpectEveryMethodRefused("", Errc::kUnauthenticated, "without a token");
  ExpectEveryMethodRefused("hunter2", Errc::kUnauthenticated, "with a malformed token");
  ExpectEveryMethodRefused("rk1_" + std::string(64, 'a'), Errc::kUnauthenticated,
                           "with an unknown token");
  const std::string log = ReadFile(server_->dir().File("server.log"));
  for (const auto& [method, fill] : EveryMethod()) {
    EXPECT_NE(log.find("audit: refused " + std::string(MethodName(method)) + " from 127.0.0.1:"),
              std::string::npos)
        << MethodName(method) << " left no audit line";
  }
  EXPECT_EQ(log.find("rk1_" + std::string(64, 'a')), std::string::npos) << "a token was logged";
}

TEST_F(AuthzTest, ATokenWorksUntilItIsRevokedOrExpires) {
  // Created by the admin through the CLI, shown once.
  CliRun created = server_->Cli({"auth", "token", "create", "--name", "carol", "--role", "reader",
                                 "--out", server_->dir().File("carol.token")});
  ASSERT_EQ(created.code(), 0) << created.Describe();
  EXPECT_EQ(created.out.find("rk1_"), std::string::npos) << "--out keeps it off stdout";
  auto carol = ReadTokenFile(server_->dir().File("carol.token"));
  ASSERT_TRUE(carol) << carol.error().ToString();
  auto who = Call(carol.value(), [](Method::Builder m) { m.setWhoAmI(); });
  ASSERT_TRUE(who) << who.error().ToString();
  EXPECT_EQ(std::string(who.value().get().getResult().getPrincipal().getName().cStr()), "carol");
  EXPECT_TRUE(Call(carol.value(), [](Method::Builder m) { m.initListWorkflows(); }));

  // A name is unique while its principal is live.
  CliRun twice = server_->Cli({"auth", "token", "create", "--name", "carol", "--role", "reader"});
  EXPECT_EQ(twice.code(), 2) << twice.Describe();
  EXPECT_NE(twice.err.find("exists already"), std::string::npos) << twice.err;

  CliRun revoked = server_->Cli({"auth", "token", "revoke", "carol"});
  ASSERT_EQ(revoked.code(), 0) << revoked.Describe();
  ExpectEveryMethodRefused(carol.value(), Errc::kUnauthenticated, "with a revoked token");
  auto refused = Call(carol.value(), [](Method::Builder m) { m.setWhoAmI(); });
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("revoked"), std::string::npos);

  CliRun brief = server_->Cli({"auth", "token", "create", "--name", "dave", "--role", "reader",
                               "--expires", "1s", "--out", server_->dir().File("dave.token")});
  ASSERT_EQ(brief.code(), 0) << brief.Describe();
  auto dave = ReadTokenFile(server_->dir().File("dave.token"));
  ASSERT_TRUE(dave);
  EXPECT_TRUE(Call(dave.value(), [](Method::Builder m) { m.setWhoAmI(); }));
  std::this_thread::sleep_for(1100ms);
  auto expired = Call(dave.value(), [](Method::Builder m) { m.setWhoAmI(); });
  ASSERT_FALSE(expired);
  EXPECT_EQ(expired.error().code(), Errc::kUnauthenticated);
  EXPECT_NE(expired.error().message().find("expired"), std::string::npos);

  // The list shows every principal and never a token; the audit log has each change.
  CliRun list = server_->Cli({"auth", "token", "list", "--json"});
  ASSERT_EQ(list.code(), 0) << list.Describe();
  EXPECT_EQ(list.out.find("rk1_"), std::string::npos);
  const json::array principals = json::parse(list.out).as_array();
  int carols = 0;
  for (const auto& p : principals) {
    if (p.at("name") == "carol") {
      ++carols;
      EXPECT_NE(p.at("revoked_at_us").as_int64(), 0);
      EXPECT_EQ(p.at("revoked_by"), "admin");
    }
  }
  EXPECT_EQ(carols, 1);
}

// Requests on two connections opened at once, in the order given, each with its own
// credential (the clients send none of their own): what a worker's connection looks like, and
// what another principal on it, or another worker with its id, would try.
struct OnConnection {
  int connection;  // 0 or 1
  std::string token;
  Fill fill;
};
std::vector<Result<Reply>> OnTwoConnections(const std::string& address,
                                            std::vector<OnConnection> requests) {
  asio::io_context io;
  std::vector<Result<Reply>> out;
  auto run = [&]() -> asio::awaitable<void> {
    std::shared_ptr<Client> clients[2];
    for (auto& client : clients) {
      auto connect = Client::Connect(io.get_executor(), address);
      auto connected = co_await std::move(connect);
      if (!connected) {
        out.push_back(connected.error());
        co_return;
      }
      client = connected.value();
    }
    for (auto& [connection, token, fill] : requests) {
      auto message = std::make_unique<capnp::MallocMessageBuilder>();
      auto request = message->initRoot<wire::Request>();
      request.setCredential(token);
      fill(request.initMethod());
      auto call = clients[connection]->Call(std::move(message), 10s);
      out.push_back(co_await std::move(call));
    }
    for (auto& client : clients) client->Close();
  };
  asio::co_spawn(io, run(), asio::detached);
  io.run();
  return out;
}

Fill Register(std::string worker_id, std::string type) {
  return [worker_id, type](Method::Builder m) {
    auto r = m.initRegisterWorker();
    r.setWorkerId(worker_id);
    r.initWorkflowTypes(1).set(0, type);
  };
}

TEST_F(AuthzTest, AWorkerIsHeldToItsScopesItsConnectionAndItsId) {
  CliRun created = server_->Cli({"auth", "token", "create", "--name", "refunds-only", "--role",
                                 "worker", "--workflow-types", "refund", "--out",
                                 server_->dir().File("scoped.token")});
  ASSERT_EQ(created.code(), 0) << created.Describe();
  auto scoped = ReadTokenFile(server_->dir().File("scoped.token"));
  ASSERT_TRUE(scoped);
  const std::string worker = Token("worker");

  auto outside = Call(scoped.value(), Register("w-scoped", "payout"));
  ASSERT_FALSE(outside);
  EXPECT_EQ(outside.error().code(), Errc::kPermissionDenied);
  EXPECT_NE(outside.error().message().find("may not host workflow type 'payout'"),
            std::string::npos) << outside.error().message();

  // A registered connection belongs to its principal; a live worker id is not given twice.
  auto replies = OnTwoConnections(
      server_->address(),
      {{0, scoped.value(), Register("w-1", "refund")},
       {0, worker, [](Method::Builder m) { m.initHeartbeat(); }},
       {1, worker, Register("w-1", "refund")},
       {0, scoped.value(), [](Method::Builder m) { m.initHeartbeat(); }}});
  ASSERT_EQ(replies.size(), 4u);
  EXPECT_TRUE(replies[0]) << replies[0].error().ToString();
  ASSERT_FALSE(replies[1]);
  EXPECT_EQ(replies[1].error().code(), Errc::kPermissionDenied);
  EXPECT_NE(replies[1].error().message().find("of principal 'refunds-only', not of 'worker'"),
            std::string::npos) << replies[1].error().message();
  ASSERT_FALSE(replies[2]);
  EXPECT_EQ(replies[2].error().code(), Errc::kAlreadyExists);
  EXPECT_NE(replies[2].error().message().find("worker id 'w-1' is in use"), std::string::npos)
      << replies[2].error().message();
  EXPECT_TRUE(replies[3]) << replies[3].error().ToString();
}

TEST_F(AuthzTest, TheCliReadsItsTokenFromAPrivateFileOnly) {
  const std::string loose = server_->dir().File("loose.token");
  std::ofstream(loose) << ReadFile(server_->TokenFile("reader"));
  CliRun refused = server_->Cli({"list", "--token-file", loose});
  EXPECT_NE(refused.code(), 0);
  EXPECT_NE(refused.err.find("chmod 600"), std::string::npos) << refused.err;
  CliRun missing = server_->Cli({"list", "--token-file", server_->dir().File("absent")});
  EXPECT_EQ(missing.code(), 2) << missing.Describe();
  EXPECT_NE(missing.err.find("absent"), std::string::npos) << missing.err;
}

// Issue 30, item 4: a token is written only into a new file of the server's or the CLI's user.
// A file another user prepared (world-writable, in a shared directory such as /tmp) or a
// symbolic link is refused, and nothing is written into or through it.
constexpr uid_t kNobody = 65534;

struct FileState {
  std::string content;
  uid_t uid = 0;
  mode_t mode = 0;
  bool operator==(const FileState&) const = default;
};

FileState StateOf(const std::string& path) {
  struct stat info {};
  EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
  return {ReadFile(path), info.st_uid, info.st_mode & 07777};
}

// A file `nobody` owns and anyone may write, as another user of /tmp could leave.
std::string PreparedByAnotherUser(const testing::TempDir& dir, const std::string& name) {
  const std::string path = dir.File(name);
  std::ofstream(path) << "prepared by someone else\n";
  EXPECT_EQ(::chown(path.c_str(), kNobody, kNobody), 0);
  EXPECT_EQ(::chmod(path.c_str(), 0666), 0);
  return path;
}

TEST(SecretFileTest, TheServerNeverWritesItsAdminTokenIntoAnotherUsersFileOrThroughALink) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  testing::TempDir dir;
  const std::string theirs = PreparedByAnotherUser(dir, "theirs.admin-token");
  const std::string link = dir.File("link.admin-token");
  std::filesystem::create_symlink(theirs, link);
  const FileState before = StateOf(theirs);
  const std::pair<std::string, std::string> cases[] = {
      {theirs, "exists and belongs to another user (uid 65534)"}, {link, "is a symbolic link"}};
  for (const auto& [token_file, says] : cases) {
    const std::string name = token_file == theirs ? "theirs" : "link";
    std::optional<testing::Subprocess> process;
    testing::ServerStart start = testing::StartServerOnce(
        RECKON_CLI_PATH, dir, name,
        {"--journal", dir.File(name + ".db"), "--listen", "127.0.0.1:0", "--quiet",
         "--admin-token-file", token_file},
        process);
    EXPECT_FALSE(start.served) << "the server started with its admin token in " << token_file;
    EXPECT_TRUE(start.status.exited && start.status.code == 1) << start.status.ToString();
    EXPECT_NE(start.log.find("'" + token_file + "' " + says), std::string::npos) << start.log;
    EXPECT_TRUE(StateOf(theirs) == before) << "the prepared file was changed through "
                                           << token_file << ": " << ReadFile(theirs);
  }
}

TEST_F(AuthzTest, TokenCreateOutRefusesAnotherUsersFileAndALinkBeforeCreatingAnything) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  testing::TempDir dir;
  const std::string theirs = PreparedByAnotherUser(dir, "theirs.token");
  const std::string link = dir.File("link.token");
  std::filesystem::create_symlink(theirs, link);
  const FileState before = StateOf(theirs);
  for (const std::string& out : {theirs, link}) {
    CliRun refused = server_->Cli(
        {"auth", "token", "create", "--name", "eve", "--role", "reader", "--out", out});
    EXPECT_NE(refused.code(), 0) << refused.Describe();
    EXPECT_NE(refused.err.find("'" + out + "'"), std::string::npos) << refused.err;
    EXPECT_TRUE(StateOf(theirs) == before) << "a token reached " << out << ": "
                                           << ReadFile(theirs);
  }
  CliRun list = server_->Cli({"auth", "token", "list"});
  ASSERT_EQ(list.code(), 0) << list.Describe();
  EXPECT_EQ(list.out.find("eve"), std::string::npos)
      << "a principal was created whose token went nowhere:\n" << list.out;
}

}  // namespace
}  // namespace reckon::api
