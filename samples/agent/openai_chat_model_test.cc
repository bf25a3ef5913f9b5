// OpenAiChatModel against FakeChatServer over real sockets on 127.0.0.1: the request it sends,
// the reply it reads, and how each failure maps to what the agent loop may conclude. Also the
// fake-chat-server binary (script, repeat, count file).
#include "samples/agent/openai_chat_model.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <fstream>
#include <optional>
#include <string>

#include "samples/agent/fake_chat_server.h"
#include "reckon/tools/http/http_client.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace reckon::agent {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// co_spawn needs a default-constructible result; Result<T> is not, so store it instead.
asio::awaitable<void> Capture(asio::awaitable<Result<ChatReply>> call,
                              std::optional<Result<ChatReply>>& out) {
  out.emplace(co_await std::move(call));
}

ChatRequest Conversation(Clock::duration timeout = 5s) {
  ChatRequest request;
  request.messages = {{"system", "You are terse."}, {"user", "Say \"hi\"\nplease"}};
  request.deadline = Clock::now() + timeout;
  return request;
}

// Runs one Complete on a fresh io_context of the test's own thread. The model is destroyed
// right after the call is created, to check that the call does not need it.
Result<ChatReply> Complete(OpenAiChatConfig config, ChatRequest request) {
  asio::io_context io;
  std::optional<Result<ChatReply>> result;
  {
    OpenAiChatModel model(std::move(config));
    asio::awaitable<Result<ChatReply>> call = model.Complete(std::move(request));
    auto on_done = [](std::exception_ptr error) {
      if (error) std::rethrow_exception(error);
    };
    asio::co_spawn(io, Capture(std::move(call), result), std::move(on_done));
  }
  io.run();
  if (!result) return Err(Errc::kInternal, "the call never completed");
  return std::move(*result);
}

class OpenAiChatModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FakeChatServer::Options options;
    options.contents = {"first", "second"};
    server_.emplace(std::move(options));
    ASSERT_TRUE(server_->Start());
  }

  OpenAiChatConfig Config(std::string api_key = "") const {
    OpenAiChatConfig config;
    config.endpoint = samples::HttpEndpoint{"127.0.0.1", server_->port()};
    config.model = "gpt-test";
    config.api_key = std::move(api_key);
    config.temperature = 0.5;
    return config;
  }

  std::optional<FakeChatServer> server_;
};

TEST_F(OpenAiChatModelTest, SendsTheConversationAndReadsTheReply) {
  Result<ChatReply> reply = Complete(Config(), Conversation());
  ASSERT_TRUE(reply) << reply.error().ToString();
  EXPECT_EQ(reply.value().content, "first");
  EXPECT_EQ(reply.value().model, "gpt-test");
  EXPECT_EQ(reply.value().finish_reason, "stop");

  std::optional<FakeChatRequest> sent = server_->last_request();
  ASSERT_TRUE(sent);
  EXPECT_FALSE(sent->authorization) << *sent->authorization;
  json::value body = json::parse(sent->body);
  EXPECT_EQ(body.at("model"), "gpt-test");
  EXPECT_EQ(body.at("temperature").to_number<double>(), 0.5);
  EXPECT_EQ(body.at("messages"), json::parse(R"([{"role":"system","content":"You are terse."},
      {"role":"user","content":"Say \"hi\"\nplease"}])"));
}

TEST_F(OpenAiChatModelTest, RepliesFollowTheScriptAndTheLastOneRepeats) {
  for (const char* expected : {"first", "second", "second"}) {
    Result<ChatReply> reply = Complete(Config(), Conversation());
    ASSERT_TRUE(reply) << reply.error().ToString();
    EXPECT_EQ(reply.value().content, expected);
  }
  EXPECT_EQ(server_->request_count(), 3u);
}

TEST(FakeChatServerTest, ByTurnTheSameConversationGetsTheSameReply) {
  FakeChatServer::Options options;
  options.contents = {"first", "second"};
  options.reply_by = FakeChatServer::ReplyBy::kTurn;
  FakeChatServer server(std::move(options));
  ASSERT_TRUE(server.Start());
  OpenAiChatConfig config;
  config.endpoint = samples::HttpEndpoint{"127.0.0.1", server.port()};
  config.model = "gpt-test";
  ChatRequest later = Conversation();
  later.messages.push_back({"assistant", "first"});
  later.messages.push_back({"user", "go on"});
  ChatRequest last = later;
  last.messages.push_back({"assistant", "second"});
  // Asked again (as after a crash), a conversation gets the reply of its turn, not the next one.
  const std::pair<ChatRequest, const char*> asked[] = {
      {Conversation(), "first"}, {Conversation(), "first"}, {later, "second"},
      {later, "second"},         {last, "second"}};
  for (const auto& [request, expected] : asked) {
    Result<ChatReply> reply = Complete(config, request);
    ASSERT_TRUE(reply) << reply.error().ToString();
    EXPECT_EQ(reply.value().content, expected);
  }
  EXPECT_EQ(server.request_count(), 5u);
}

TEST_F(OpenAiChatModelTest, SendsABearerTokenOnlyWithAKey) {
  ASSERT_TRUE(Complete(Config("sk-test-123"), Conversation()));
  std::optional<FakeChatRequest> sent = server_->last_request();
  ASSERT_TRUE(sent);
  ASSERT_TRUE(sent->authorization);
  EXPECT_EQ(*sent->authorization, "Bearer sk-test-123");
  EXPECT_EQ(sent->body.find("sk-test-123"), std::string::npos);
}

TEST_F(OpenAiChatModelTest, ServerErrorsAndRateLimitsAreRetryable) {
  server_->FailNext(1, 503);
  server_->FailNext(1, 429);
  server_->FailNext(1, 500);
  for (int status : {503, 429, 500}) {
    Result<ChatReply> reply = Complete(Config(), Conversation());
    ASSERT_FALSE(reply);
    EXPECT_EQ(reply.error().code(), Errc::kUnavailable) << reply.error().ToString();
    EXPECT_NE(reply.error().message().find(std::to_string(status)), std::string::npos)
        << reply.error().ToString();
  }
  // The failures did not use up the script.
  Result<ChatReply> reply = Complete(Config(), Conversation());
  ASSERT_TRUE(reply) << reply.error().ToString();
  EXPECT_EQ(reply.value().content, "first");
  EXPECT_EQ(server_->request_count(), 4u);
}

TEST_F(OpenAiChatModelTest, RefusalsAreInvalidArgument) {
  for (int status : {400, 401, 403, 404, 422}) {
    server_->FailNext(1, status);
    Result<ChatReply> reply = Complete(Config(), Conversation());
    ASSERT_FALSE(reply);
    EXPECT_EQ(reply.error().code(), Errc::kInvalidArgument) << reply.error().ToString();
    EXPECT_NE(reply.error().message().find("refused the request with " + std::to_string(status)),
              std::string::npos)
        << reply.error().ToString();
  }
}

TEST_F(OpenAiChatModelTest, TheKeyIsNeverQuotedInAnError) {
  server_->ReplyNext(401, R"({"error":{"message":"Incorrect API key provided: sk-secret-9"}})");
  Result<ChatReply> reply = Complete(Config("sk-secret-9"), Conversation());
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().code(), Errc::kInvalidArgument);
  EXPECT_EQ(reply.error().message().find("sk-secret-9"), std::string::npos)
      << reply.error().ToString();
  EXPECT_NE(reply.error().message().find("Incorrect API key provided: <redacted>"),
            std::string::npos)
      << reply.error().ToString();
}

TEST_F(OpenAiChatModelTest, AGarbageBodyIsInvalidArgument) {
  server_->ReplyNext(200, "<html>" + std::string(1000, 'x') + "</html>");
  Result<ChatReply> reply = Complete(Config(), Conversation());
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().code(), Errc::kInvalidArgument);
  EXPECT_NE(reply.error().message().find("not JSON"), std::string::npos)
      << reply.error().ToString();
  EXPECT_LT(reply.error().message().size(), 400u) << "quotes only a prefix of the body";
}

TEST_F(OpenAiChatModelTest, MissingChoicesIsInvalidArgument) {
  server_->ReplyNext(200, R"({"model":"gpt-test","object":"chat.completion"})");
  server_->ReplyNext(200, R"({"choices":[]})");
  server_->ReplyNext(200, R"({"choices":[{"message":{"role":"assistant","content":null}}]})");
  for (const char* named : {"no \"choices\" array", "\"choices\" is empty",
                            "choices[0].message.content is not a string"}) {
    Result<ChatReply> reply = Complete(Config(), Conversation());
    ASSERT_FALSE(reply);
    EXPECT_EQ(reply.error().code(), Errc::kInvalidArgument);
    EXPECT_NE(reply.error().message().find(named), std::string::npos) << reply.error().ToString();
  }
}

TEST_F(OpenAiChatModelTest, AHungServerMeetsTheDeadline) {
  server_->HangNext(1);
  Clock::time_point start = Clock::now();
  Result<ChatReply> reply = Complete(Config(), Conversation(200ms));
  Clock::duration took = Clock::now() - start;
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().code(), Errc::kDeadlineExceeded) << reply.error().ToString();
  EXPECT_GE(took, 150ms);
  EXPECT_LT(took, 5s);
  EXPECT_EQ(server_->request_count(), 1u);
  // Not an "outcome unknown" for a tool layer: a model call has no side effect.
  EXPECT_FALSE(tools::HttpFailureOf(reply.error())) << reply.error().ToString();
}

TEST_F(OpenAiChatModelTest, APassedDeadlineSendsNothing) {
  ChatRequest request = Conversation();
  request.deadline = Clock::now() - 1ms;
  Result<ChatReply> reply = Complete(Config(), std::move(request));
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().code(), Errc::kDeadlineExceeded) << reply.error().ToString();
  EXPECT_EQ(server_->request_count(), 0u);
}

TEST_F(OpenAiChatModelTest, NothingListeningIsUnavailable) {
  OpenAiChatConfig config = Config();
  server_.reset();  // stops the server and frees its port
  Result<ChatReply> reply = Complete(config, Conversation());
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().code(), Errc::kUnavailable) << reply.error().ToString();
  EXPECT_NE(reply.error().message().find("connection_refused"), std::string::npos)
      << reply.error().ToString();
}

TEST(ParseChatResponseTest, OptionalFieldsMayBeAbsent) {
  Result<ChatReply> reply =
      ParseChatResponse(200, R"({"choices":[{"message":{"content":"ok"}}]})", "");
  ASSERT_TRUE(reply) << reply.error().ToString();
  EXPECT_EQ(reply.value().content, "ok");
  EXPECT_EQ(reply.value().model, "");
  EXPECT_EQ(reply.value().finish_reason, "");
}

TEST(ParseChatResponseTest, AnEmptyModelIsRefusedBeforeSending) {
  OpenAiChatConfig config;
  config.endpoint = samples::HttpEndpoint{"127.0.0.1", 9};
  Result<ChatReply> reply = Complete(config, Conversation());
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().code(), Errc::kInvalidArgument) << reply.error().ToString();
}

TEST(FakeChatServerBinaryTest, ServesTheScriptAndCountsRequests) {
  reckon::testing::TempDir dir;
  std::string script = dir.File("script.json");
  std::string counts = dir.File("count");
  std::ofstream(script) << R"(["one", "two"])";
  reckon::testing::SubprocessOptions options;
  options.args = {"--port", "0", "--script", script, "--count-file", counts};
  Result<reckon::testing::Subprocess> child =
      reckon::testing::Subprocess::Start(RECKON_FAKE_CHAT_SERVER_PATH, std::move(options));
  ASSERT_TRUE(child) << child.error().ToString();
  Result<std::string> line = child.value().ReadLine(10s);
  ASSERT_TRUE(line) << line.error().ToString();
  const std::string label = "listening on ";
  ASSERT_EQ(line.value().rfind(label + "127.0.0.1:", 0), 0u) << line.value();
  Result<samples::HttpEndpoint> endpoint =
      samples::ParseHttpUrl("http://" + line.value().substr(label.size()));
  ASSERT_TRUE(endpoint) << endpoint.error().ToString();

  OpenAiChatConfig config;
  config.endpoint = endpoint.value();
  config.model = "gpt-test";
  for (const char* expected : {"one", "two", "two"}) {
    Result<ChatReply> reply = Complete(config, Conversation());
    ASSERT_TRUE(reply) << reply.error().ToString();
    EXPECT_EQ(reply.value().content, expected);
  }
  std::string count;
  std::ifstream(counts) >> count;
  EXPECT_EQ(count, "3");

  Result<reckon::testing::ExitStatus> status = child.value().Terminate();
  ASSERT_TRUE(status) << status.error().ToString();
  EXPECT_TRUE(status.value().Succeeded()) << status.value().ToString();
}

}  // namespace
}  // namespace reckon::agent
