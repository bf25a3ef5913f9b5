#include "reckon/engine/testing/intent_mutation.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include <string>
#include <vector>

#include "reckon/base/jcs.h"
#include "reckon/base/json_schema.h"

namespace reckon::testing {
namespace {

namespace json = boost::json;

TEST(IntentMutation, SecretPathsMatchAtStepBoundariesAndStopAtArrays) {
  const std::vector<std::string> secrets = {"card_token", "card.number"};
  EXPECT_TRUE(UnderSecretField({std::string("card_token")}, secrets));
  EXPECT_TRUE(UnderSecretField({std::string("card_token"), std::string("value")}, secrets));
  EXPECT_TRUE(UnderSecretField({std::string("card"), std::string("number")}, secrets));
  EXPECT_FALSE(UnderSecretField({std::string("card")}, secrets));
  EXPECT_FALSE(UnderSecretField({std::string("card_token_id")}, secrets));
  EXPECT_FALSE(UnderSecretField({std::string("card"), std::size_t{0}, std::string("number")},
                                secrets));
  EXPECT_EQ(PathText({std::string("messages"), std::size_t{2}, std::string("role")}),
            "messages[2].role");
}

TEST(IntentMutation, GeneratedInputsAreValidAndEveryMutationChangesTheCanonicalForm) {
  const json::value schema = json::parse(R"({"type": "object", "required": ["items", "n"],
      "properties": {"n": {"type": "integer", "minimum": 1}, "s": {"type": "string",
        "minLength": 2, "maxLength": 4}, "items": {"type": "array", "minItems": 1, "items": {
        "type": "object", "required": ["k"], "properties": {"k": {"enum": ["a", "b"]},
        "b": {"type": "boolean"}}, "additionalProperties": false}}},
      "additionalProperties": false})");
  auto compiled = JsonSchema::Compile(schema);
  ASSERT_TRUE(compiled) << compiled.error().message();
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    Rng rng(seed);
    const json::value input = GenerateInput(schema, rng);
    EXPECT_TRUE(compiled.value().Validate(input)) << "seed " << seed << ": " << input;
    const Mutation m = MutateOneField(input, rng);
    EXPECT_NE(CanonicalizeJson(m.input).value(), CanonicalizeJson(input).value()) << seed;
    EXPECT_FALSE(m.what.empty());
  }
}

}  // namespace
}  // namespace reckon::testing
