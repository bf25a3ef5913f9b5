// The tools file loader: the refund sample's file loads, matches the C++ sample's contracts
// hash for hash and passes tools.schema.json; a bad file reports every problem at once, each
// naming the tool and the field; templates fill requests in as documented.
#include "reckon/tools/http/http_tools_file.h"

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "reckon/base/jcs.h"
#include "reckon/base/json_schema.h"
#include "reckon/contract/contract_json.h"

namespace reckon::tools {
namespace {

namespace json = boost::json;

const std::string kSource = RECKON_SOURCE_DIR;

EnvLookup Env(std::map<std::string, std::string> values) {
  return [values = std::move(values)](const std::string& name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

EnvLookup RefundEnv() {
  return Env({{"PAYMENTS_URL", "http://127.0.0.1:8080"}, {"REFUND_CARD_TOKEN", "tok_canary_123456"}});
}

json::value ReadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  auto parsed = ParseStrictJson(text.str());
  EXPECT_TRUE(parsed) << path << ": " << parsed.error().ToString();
  return parsed ? parsed.value() : json::value();
}

TEST(HttpToolsFileTest, TheRefundSampleLoadsWithTheCppSamplesContracts) {
  auto file = LoadHttpToolsFile(kSource + "/samples/refund/tools.json", RefundEnv());
  ASSERT_TRUE(file) << file.error().ToString();
  ASSERT_EQ(file.value()->tools.size(), 2u);
  EXPECT_EQ(file.value()->secrets.at("card_token"), "tok_canary_123456");
  // Same contracts, same hashes: a server accepts either worker.
  json::value cpp = ReadJson(kSource + "/samples/refund/refund_contracts.json");
  std::map<std::string, std::string> cpp_hashes;
  for (const json::value& entry : cpp.as_array()) {
    auto contract = ContractFromJson(entry);
    ASSERT_TRUE(contract) << contract.error().ToString();
    cpp_hashes[contract.value().name] = ContractHash(contract.value()).value();
  }
  for (const HttpToolSpec& spec : file.value()->tools) {
    EXPECT_EQ(ContractHash(spec.contract).value(), cpp_hashes.at(spec.contract.name))
        << spec.contract.name;
  }
}

TEST(HttpToolsFileTest, TheSchemaAcceptsTheRefundSampleAndRefusesAMisspeltField) {
  auto schema = JsonSchema::Compile(ReadJson(kSource + "/tools/http/tools.schema.json"));
  ASSERT_TRUE(schema) << schema.error().ToString();
  json::value sample = ReadJson(kSource + "/samples/refund/tools.json");
  EXPECT_TRUE(schema.value().Validate(sample)) << schema.value().Validate(sample).error().ToString();
  sample.as_object()["tools"].as_array()[0].as_object()["outcome"] = json::array();
  sample.as_object()["tools"].as_array()[1].as_object()["outcomes"].as_array()[0]
      .as_object()["means"] = "ok";
  auto violations = schema.value().Violations(sample);
  EXPECT_EQ(violations.size(), 2u);
}

// One file with a problem in nearly every field: every one is reported, each naming the tool
// and the field, and nothing is loaded.
TEST(HttpToolsFileTest, ABadFileReportsEveryProblemByToolAndField) {
  json::value doc = ReadJson(kSource + "/samples/refund/tools.json");
  json::object& root = doc.as_object();
  root["secrets"].as_object()["api_key"] = json::object{{"env", "NOT_SET_ANYWHERE"}};
  json::object& send = root["tools"].as_array()[0].as_object();
  json::object& lookup = root["tools"].as_array()[1].as_object();
  send["request"].as_object()["method"] = "FETCH";
  send["request"].as_object()["url"] = "{env.PAYMENTS_URL}/refunds/{input.refund_idd}";
  send["request"].as_object()["headers"] = json::object{{"Authorization", "Bearer {secret.nope}"}};
  send["outcomes"].as_array()[1].as_object()["code"] = "too_many";  // not in retryable_codes
  send["outcomes"].as_array().push_back(json::object{{"status", json::array{429}}, {"means", "unknown"}});
  send.erase("lookup");  // the contract reconciles by lookup
  send["colour"] = "blue";
  lookup["reply"] = json::object{{"provider_ref", "refund_id"}};  // not a JSON Pointer
  lookup["contract"].as_object()["side_effect"] = "idempotent_write";  // now it needs a key
  lookup["contract"].as_object()["evidence"] = "the payment";

  auto file = ParseHttpToolsFile(doc, ".", "bad.json", Env({{"PAYMENTS_URL", "http://h:1"},
                                                            {"REFUND_CARD_TOKEN", "t"}}));
  ASSERT_FALSE(file);
  EXPECT_EQ(file.error().code(), Errc::kInvalidArgument);
  const std::string message = file.error().message();
  for (const char* expected : {
           "secrets.api_key.env: the environment variable NOT_SET_ANYWHERE is not set",
           "tool 'send_refund' (tools[0]): (tool): unknown member 'colour'",
           "tool 'send_refund' (tools[0]): request.method: must be one of",
           "tool 'send_refund' (tools[0]): request.url: {input.refund_idd}: the contract's "
           "input_schema declares no 'refund_idd'",
           "tool 'send_refund' (tools[0]): request.headers.Authorization: {secret.nope}: no "
           "secret 'nope'",
           "tool 'send_refund' (tools[0]): outcomes[1].code: 'too_many' is not in contract.retry."
           "retryable_codes",
           "tool 'send_refund' (tools[0]): outcomes[5].status: status 429 is already mapped by "
           "outcomes[1]",
           "tool 'send_refund' (tools[0]): lookup: missing",
           "tool 'lookup_payment' (tools[1]): reply.provider_ref: must be a JSON Pointer",
           "tool 'lookup_payment' (tools[1]): idempotency_key_header: a idempotent_write must "
           "send the operation id",
       }) {
    EXPECT_NE(message.find(expected), std::string::npos) << "missing: " << expected << "\nin:\n"
                                                         << message;
  }
  EXPECT_NE(message.find("10 problem(s); nothing was started"), std::string::npos) << message;
}

TEST(HttpToolsFileTest, UnreadableOrNonJsonFilesAndBadContractsAreNamed) {
  auto missing = LoadHttpToolsFile(kSource + "/no/such/tools.json", RefundEnv());
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("cannot be read"), std::string::npos);

  json::value doc = json::parse(R"({"tools": [{"contract": {"name": "x", "side_effect": "read_only",
      "input_schema": {"type": "object"}, "retry": {"max_attempts": "three"}},
      "request": {"method": "GET", "url": "https://example.com/x"},
      "outcomes": [{"status": ["2xx"], "means": "success", "code": "c"}, {"status": [99], "means": "maybe"}]},
      {"contract": {"name": "y", "description": "d", "side_effect": "read_only", "attempt_timeout_ms": 1000,
      "heartbeat_timeout_ms": 500, "input_schema": {"type": "object"}},
      "request": {"method": "GET", "url": "https://example.com/x"},
      "outcomes": [{"status": ["2xx"], "means": "success", "code": "c"}, {"status": [99], "means": "maybe"}]}]})");
  auto file = ParseHttpToolsFile(doc, ".", "f.json", RefundEnv());
  ASSERT_FALSE(file);
  const std::string message = file.error().message();
  for (const char* expected : {"tool 'x' (tools[0]): contract: contract JSON: retry.max_attempts",
                               "tool 'x' (tools[0]): request.url: https is not supported",
                               "tool 'x' (tools[0]): outcomes[0].code: a success has no failure code",
                               "tool 'x' (tools[0]): outcomes[1].status[0]: must be a status",
                               "tool 'x' (tools[0]): outcomes[1].means: must be",
                               "tool 'y' (tools[1]): contract.heartbeat_timeout_ms: an HTTP tool "
                               "does not heartbeat"}) {
    EXPECT_NE(message.find(expected), std::string::npos) << "missing: " << expected << "\nin:\n"
                                                         << message;
  }
}

// "accepted" needs a contract that declares completion, and the provider's reference.
TEST(HttpToolsFileTest, AcceptedNeedsACompletionDeadlineAndAProviderRef) {
  json::value doc = ReadJson(kSource + "/samples/refund/tools.json");
  json::object& send = doc.as_object()["tools"].as_array()[0].as_object();
  send["outcomes"].as_array()[0] = json::object{{"status", json::array{202}}, {"means", "accepted"}};
  send.erase("reply");
  auto file = ParseHttpToolsFile(doc, ".", "async.json", RefundEnv());
  ASSERT_FALSE(file);
  const std::string message = file.error().message();
  EXPECT_NE(message.find("tool 'send_refund' (tools[0]): outcomes[0].means: \"accepted\" needs a "
                         "contract that declares completion"),
            std::string::npos) << message;
  EXPECT_NE(message.find("tool 'send_refund' (tools[0]): reply.provider_ref: outcomes[0] means "
                         "\"accepted\""),
            std::string::npos) << message;
  send["contract"].as_object()["completion"] = json::object{{"deadline_ms", 60000}};
  send["reply"] = json::object{{"provider_ref", "/refund_id"}};
  auto fixed = ParseHttpToolsFile(doc, ".", "async.json", RefundEnv());
  ASSERT_TRUE(fixed) << fixed.error().ToString();
  EXPECT_EQ(fixed.value()->tools[0].outcomes[0].means, HttpOutcomeMeaning::kAccepted);
}

TEST(HttpToolsFileTest, SecretsComeFromAFileBesideTheToolsFile) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("reckon-http-tools-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
       "-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  { std::ofstream(dir / "token.txt") << "tok_from_file_987654\n"; }
  json::value doc = ReadJson(kSource + "/samples/refund/tools.json");
  doc.as_object()["secrets"].as_object()["card_token"] = json::object{{"file", "token.txt"}};
  { std::ofstream(dir / "tools.json") << json::serialize(doc); }
  auto file = LoadHttpToolsFile((dir / "tools.json").string(),
                                Env({{"PAYMENTS_URL", "http://127.0.0.1:1"}}));
  ASSERT_TRUE(file) << file.error().ToString();
  EXPECT_EQ(file.value()->secrets.at("card_token"), "tok_from_file_987654");
  std::filesystem::remove_all(dir);
}

TEST(HttpTemplateTest, ValuesKeepTheirTypeAndOptionalMembersAreLeftOut) {
  std::map<std::string, std::string> secrets = {{"key", "s3cr3t value"}};
  json::value schema = json::parse(R"({"type": "object", "properties": {"id": {"type": "string"},
      "n": {"type": "integer"}, "opt": {"type": "string"}}})");
  TemplateScope scope{Env({{"BASE", "http://h:9"}}), &secrets, &schema};
  std::vector<std::string> problems;
  TextTemplate url = TextTemplate::Parse("{env.BASE}/x/{input.id}?k={secret.key}&op={operation_id}&b={{}}",
                                         scope, "url", problems);
  JsonTemplate body = JsonTemplate::Parse(
      json::parse(R"({"n": "{input.n}", "opt": "{input.opt}", "text": "n={input.n}", "list": [1, "{operation_id}"]})"),
      scope, "body", problems);
  ASSERT_TRUE(problems.empty()) << problems.front();
  json::value input = json::parse(R"({"id": "a/b c", "n": 42})");
  TemplateValues values{&input, "op_1", &secrets};
  auto expanded = url.Expand(values, TemplateEscape::kUrl);
  ASSERT_TRUE(expanded) << expanded.error().ToString();
  EXPECT_EQ(expanded.value(), "http://h:9/x/a%2Fb%20c?k=s3cr3t%20value&op=op_1&b={}");
  auto json_body = body.Expand(values);
  ASSERT_TRUE(json_body) << json_body.error().ToString();
  EXPECT_EQ(json::serialize(json_body.value()),
            R"({"n":42,"text":"n=42","list":[1,"op_1"]})");
  problems.clear();
  (void)TextTemplate::Parse("{env.MISSING}{what}{input.}", scope, "f", problems);
  EXPECT_EQ(problems.size(), 3u);
}

}  // namespace
}  // namespace reckon::tools
