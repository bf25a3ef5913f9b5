#include "reckon/base/intent_hash.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <boost/json.hpp>

#include "reckon/base/jcs.h"

namespace reckon {
namespace {

boost::json::value Parse(std::string_view text) { return ParseStrictJson(text).value(); }

std::string Hash(std::string_view text, const std::vector<std::string>& secrets = {}) {
  return IntentHash(Parse(text), secrets).value();
}

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(ToHex(Sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(ToHex(Sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(ToHex(Sha256(std::string("a\0b", 3))), ToHex(Sha256(std::string("a\0b", 3))));
  EXPECT_NE(ToHex(Sha256(std::string("a\0b", 3))), ToHex(Sha256("a")));
}

TEST(IntentHash, IsSha256OfTheCanonicalForm) {
  EXPECT_EQ(Hash(R"({ "b" : 1.0, "a" : "x" })"), ToHex(Sha256(R"({"a":"x","b":1})")));
  EXPECT_EQ(Hash("{}"), "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
}

TEST(IntentHash, SameIntentSameHash) {
  const std::string hash = Hash(R"({"amount":1,"currency":"EUR","to":{"iban":"DE1","name":"A"}})");
  EXPECT_EQ(Hash(R"({"to":{"name":"A","iban":"DE1"},"currency":"EUR","amount":1.0})"), hash);
  EXPECT_EQ(Hash(R"({"currency":"\u0045UR","amount":10e-1,"to":{"iban":"DE1","name":"A"}})"), hash);
  EXPECT_EQ(hash.size(), 64u);
  EXPECT_EQ(hash.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(IntentHash, SecretFieldsDoNotInfluenceTheHash) {
  const std::vector<std::string> secrets = {"card.number", "api_key", "no.such.path"};
  const std::string hash =
      Hash(R"({"api_key":"k1","amount":5,"card":{"number":"4111","exp":"12/30"}})", secrets);
  EXPECT_EQ(Hash(R"({"api_key":"k2","amount":5,"card":{"number":"5500","exp":"12/30"}})", secrets),
            hash);
  EXPECT_EQ(Hash(R"({"amount":5,"card":{"exp":"12/30"}})", secrets), hash)
      << "a removed secret is the same as an absent one";
  EXPECT_NE(Hash(R"({"api_key":"k1","amount":6,"card":{"number":"4111","exp":"12/30"}})", secrets),
            hash);
  EXPECT_NE(Hash(R"({"api_key":"k1","amount":5,"card":{"number":"4111","exp":"01/31"}})", secrets),
            hash);
}

TEST(RemoveSecretFields, RemovesNestedPathsAndIgnoresTheRest) {
  const std::vector<std::string> secrets = {"a.b.c", "x", "missing", "a.missing.c", "s.t", "l.0"};
  const boost::json::value input =
      Parse(R"({"a":{"b":{"c":1,"d":2}},"x":[1],"s":"str","l":[{"0":1}],"keep":true})");
  EXPECT_EQ(RemoveSecretFields(input, secrets),
            Parse(R"({"a":{"b":{"d":2}},"s":"str","l":[{"0":1}],"keep":true})"));
  EXPECT_EQ(input.at("x"), Parse("[1]")) << "the input is not modified";
  EXPECT_EQ(RemoveSecretFields(Parse("[1,2]"), secrets), Parse("[1,2]"));
  EXPECT_EQ(RemoveSecretFields(Parse(R"({"a.b":1})"), std::vector<std::string>{"a.b"}),
            Parse(R"({"a.b":1})"))
      << "a dot always separates path segments";
}

TEST(IntentHash, RejectsWhatCannotBeCanonicalized) {
  Result<std::string> result = IntentHash(Parse(R"({"n":9007199254740993})"), {});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), Errc::kInvalidArgument);
  EXPECT_NE(result.error().message().find("/n"), std::string::npos) << result.error().message();
  // ...unless the offending field is a secret.
  EXPECT_TRUE(IntentHash(Parse(R"({"n":9007199254740993})"), std::vector<std::string>{"n"}));
}

}  // namespace
}  // namespace reckon
