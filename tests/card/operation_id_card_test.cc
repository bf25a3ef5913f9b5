// The contract card's answer 3 against the behaviour: the card's facts say what the operation
// id is derived from (in order) and how each kind of tool receives it; a real embedded run
// (testkit/test_env.h) hands the id to a C++ tool, to an HTTP tool (a provider on 127.0.0.1)
// and to an MCP tool (tests/mcp/refund_mcp_server.py over stdio), and each must get exactly the
// id the card's derivation gives, where the card says. Change an answer's facts
// (contract/operation_id_facts.h) without the behaviour, or the behaviour without the card,
// and a test here fails.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "reckon/base/intent_hash.h"
#include "reckon/base/sha256.h"
#include "reckon/contract/contract_json.h"
#include "reckon/engine/operation_id.h"
#include "reckon/testkit/gtest.h"
#include "reckon/tools/http/http_tool.h"
#include "reckon/tools/http/http_tools_file.h"
#include "reckon/tools/mcp/mcp_tool_source.h"
#include "tests/card/card_run.h"
#include "tests/mcp/mcp_support.h"
#include "tests/support/temp_dir.h"

namespace reckon::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace json = boost::json;
using namespace std::chrono_literals;

// The id the card describes: its prefix, then 32 hex digits of SHA-256 over the inputs it
// names, in its order, each length-prefixed (run-scoped ids carry the tag "v2/" first).
std::string CardDerivation(const json::object& facts, const char* inputs_key, bool run_scoped,
                           const std::map<std::string, std::string>& values) {
  std::string material = run_scoped ? "v2/" : "";
  for (const json::value& name : facts.at(inputs_key).as_array()) {
    const std::string& part = values.at(std::string(name.as_string()));  // throws if unknown
    material += std::to_string(part.size()) + ":" + part;
  }
  return std::string(facts.at("prefix").as_string()) + ToHex(Sha256(material)).substr(0, 32);
}

std::string Text(const json::object& object, std::string_view key) {
  const json::value* value = object.if_contains(key);
  return value != nullptr && value->is_string() ? std::string(value->as_string()) : "(absent)";
}

// The id the card's derivation gives for what `run` journaled.
std::string CardIdOf(const json::object& facts, const CardRun& run) {
  return CardDerivation(facts, "derived_from", true,
                        {{"namespace", run.started.id_namespace},
                         {"workflow_id", run.ref.workflow_id},
                         {"run_id", run.ref.run_id},
                         {"step_id", run.prepared.step_id}});
}

ToolContract WriteContract(const std::string& name) {
  ToolContract c;
  c.name = name;
  c.description = "Write a note.";
  c.side_effect = SideEffect::kIdempotentWrite;
  c.attempt_timeout = 10s;
  c.retry.max_attempts = 1;
  c.input_schema = json::parse(R"({"type": "object"})");
  c.evidence = "The note's reference.";
  return c;
}

asio::awaitable<AttemptOutcome> Remember(std::vector<ToolCallContext>* seen,
                                         ToolCallContext context) {
  seen->push_back(context);
  co_return ToolSucceeded(json::object{{"ok", true}}, "note-1");
}

// An HTTP provider on 127.0.0.1 that answers every request 200 {"id": "ref-1"} and keeps
// each request. Runs on its own thread; stops when destroyed.
class RecordingProvider {
 public:
  RecordingProvider() {
    asio::co_spawn(io_, Serve(), asio::detached);
    thread_ = std::thread([this] { io_.run(); });
  }
  ~RecordingProvider() {
    io_.stop();
    thread_.join();
  }
  std::uint16_t port() const { return port_; }
  std::vector<http::request<http::string_body>> requests() {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  asio::awaitable<void> Serve() {
    for (;;) {
      asio::ip::tcp::socket socket = co_await acceptor_.async_accept(asio::use_awaitable);
      beast::flat_buffer buffer;
      http::request<http::string_body> request;
      co_await http::async_read(socket, buffer, request, asio::use_awaitable);
      {
        std::lock_guard lock(mutex_);
        requests_.push_back(request);
      }
      http::response<http::string_body> response{http::status::ok, request.version()};
      response.set(http::field::content_type, "application/json");
      response.body() = R"({"id": "ref-1"})";
      response.keep_alive(false);
      response.prepare_payload();
      co_await http::async_write(socket, response, asio::use_awaitable);
    }
  }

  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_{io_, {asio::ip::address_v4::loopback(), 0}};
  const std::uint16_t port_ = acceptor_.local_endpoint().port();
  std::mutex mutex_;
  std::vector<http::request<http::string_body>> requests_;  // GUARDED_BY(mutex_)
  std::thread thread_;
};

class OperationIdCardTest : public ::testing::Test {
 protected:
  const json::object facts_ = CardFacts(WriteContract("any"), "operation_id");
  TempDir dir_;
  std::unique_ptr<testkit::TestEnv> env_ = MakeCardEnv();
};

TEST_F(OperationIdCardTest, ACppToolReadsTheIdTheCardDerives) {
  std::vector<ToolCallContext> seen;
  RECKON_ASSERT_OK(env_->tools().Register(Tool{WriteContract("cpp_note"),
      [&seen](json::value, ToolCallContext context) { return Remember(&seen, std::move(context)); },
      {}}));
  RECKON_ASSERT_OK_AND_ASSIGN(CardRun run, RunCallOne(*env_, "card-cpp", "cpp_note", "note",
                                                      json::object{}));
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(Text(facts_, "cpp_tool_reads"), "ctx.operation_id");
  EXPECT_EQ(run.started.id_namespace, kCardNamespace);
  EXPECT_EQ(run.prepared.step_id, "note");
  const std::string card_id = CardIdOf(facts_, run);
  EXPECT_EQ(seen[0].operation_id, card_id) << "the card: " << json::serialize(facts_);
  // Journaled where the card says, before the attempt.
  EXPECT_EQ(Text(facts_, "journaled_in"), "OperationPrepared");
  EXPECT_EQ(run.prepared.operation_id, card_id);

  // Runs journaled before 0.3 keep workflow-scoped ids: the card's other list of inputs.
  const IdScope legacy{kWorkflowScopedIds, kCardNamespace, "card-cpp", run.ref.run_id};
  EXPECT_EQ(OperationIdFor(legacy, "note"),
            CardDerivation(facts_, "derived_from_before_0_3", false,
                           {{"namespace", kCardNamespace}, {"workflow_id", "card-cpp"},
                            {"run_id", run.ref.run_id}, {"step_id", "note"}}));
}

TEST_F(OperationIdCardTest, AnHttpToolSendsTheIdInTheHeaderItsToolsFileNames) {
  RecordingProvider provider;
  const std::string header = "X-Card-Key";
  const std::string url = "http://127.0.0.1:" + std::to_string(provider.port()) +
                          "/notes?key=" + std::string(facts_.at("http_template").as_string());
  json::object tool = json::parse(R"({"outcomes": [{"status": [200], "means": "success"}],
                                       "reply": {"provider_ref": "/id"}})").as_object();
  tool["contract"] = ContractToJson(WriteContract("http_note"));
  tool["request"] = json::object{{"method", "POST"}, {"url", url},
                                 {"body", json::parse(R"({"input": "without_secret_fields"})")}};
  // The member the card names; the loader refuses a member it does not know.
  tool[facts_.at("http_header_named_by").as_string()] = header;
  const std::string path = dir_.File("tools.json");
  std::ofstream(path) << json::serialize(json::object{{"tools", json::array{tool}}});
  auto no_env = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  RECKON_ASSERT_OK_AND_ASSIGN(auto file, tools::LoadHttpToolsFile(path, no_env));
  RECKON_ASSERT_OK(tools::RegisterHttpTools(env_->tools(), file));

  RECKON_ASSERT_OK_AND_ASSIGN(CardRun run, RunCallOne(*env_, "card-http", "http_note", "note",
                                                      json::object{{"text", "hello"}}));
  const std::string card_id = CardIdOf(facts_, run);
  const auto requests = provider.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(std::string(requests[0][header]), card_id) << "the card: " << json::serialize(facts_);
  EXPECT_EQ(std::string(requests[0].target()), "/notes?key=" + card_id);
}

TEST_F(OperationIdCardTest, AnMcpToolGetsTheIdInMetaAndInTheArgumentItsBindingNames) {
  // The MCP sample's contracts, with an attempt deadline the real server meets easily.
  const std::string contracts_path = FastContractsFile(dir_);
  std::stringstream text;
  text << std::ifstream(contracts_path).rdbuf();
  json::value contracts = json::parse(text.str());
  std::string argument;
  for (json::value& entry : contracts.as_array()) {
    entry.at("contract").as_object()["attempt_timeout_ms"] = 10000;
    if (entry.at("contract").at("name").as_string() == "send_refund") {
      // The member the card names holds the argument.
      argument = entry.at("mcp").at(facts_.at("mcp_argument_named_by").as_string()).as_string();
    }
  }
  ASSERT_EQ(argument, "idempotency_key");
  std::ofstream(contracts_path) << json::serialize(contracts);

  // Listed and registered on the life's loop before the run starts, as `reckon plan run` does.
  tools::McpServerAddress server{StdioServerCommand(dir_, ""), ""};
  RECKON_ASSERT_OK_AND_ASSIGN(auto source, tools::OpenMcpTools(env_->host().io(), server,
                                                               contracts_path, env_->tools()));
  json::object refund{{"payment_id", "pay-3"}, {"amount_cents", 700}, {"reason", "card"}};
  RECKON_ASSERT_OK_AND_ASSIGN(CardRun run, RunCallOne(*env_, "card-mcp", "send_refund", "refund",
                                                      refund));
  const std::string card_id = CardIdOf(facts_, run);
  const std::vector<json::object> refunds = LedgerRecords(dir_, "refund");
  ASSERT_EQ(refunds.size(), 1u);
  const json::string& meta_key = facts_.at("mcp_meta_key").as_string();
  ASSERT_TRUE(refunds[0].at("meta").as_object().contains(meta_key)) << json::serialize(refunds[0]);
  EXPECT_EQ(Text(refunds[0].at("meta").as_object(), meta_key), card_id)
      << "the card: " << json::serialize(facts_);
  EXPECT_EQ(Text(refunds[0].at("arguments").as_object(), argument), card_id);
}

}  // namespace
}  // namespace reckon::testing
