#include "reckon/contract/field_path.h"

#include <boost/json/parse.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace reckon {
namespace {

using ::testing::ElementsAre;

TEST(FieldPathTest, Validity) {
  EXPECT_TRUE(IsValidFieldPath("a"));
  EXPECT_TRUE(IsValidFieldPath("card.number"));
  EXPECT_FALSE(IsValidFieldPath(""));
  EXPECT_FALSE(IsValidFieldPath(".a"));
  EXPECT_FALSE(IsValidFieldPath("a."));
  EXPECT_FALSE(IsValidFieldPath("a..b"));
  EXPECT_THAT(SplitFieldPath("a.b.c"), ElementsAre("a", "b", "c"));
}

TEST(FieldPathTest, FindFieldFollowsObjectsOnly) {
  auto input = boost::json::parse(R"({"card":{"number":"4242"},"lines":[{"sku":"x"}]})");
  ASSERT_NE(FindField(input, "card.number"), nullptr);
  EXPECT_EQ(FindField(input, "card.number")->as_string(), "4242");
  EXPECT_EQ(FindField(input, "card.cvc"), nullptr);
  EXPECT_EQ(FindField(input, "card.number.x"), nullptr);
  EXPECT_EQ(FindField(input, "lines.0.sku"), nullptr);
}

TEST(FieldPathTest, DeclaredFieldsAndRequiredness) {
  auto schema = boost::json::parse(R"({"type":"object","required":["card","amount"],
      "properties":{"amount":{"type":"integer"},"memo":{"type":"string"},
        "card":{"type":"object","required":["number"],
                "properties":{"number":{"type":"string"},"cvc":{"type":"string"}}}}})");
  EXPECT_TRUE(FindDeclaredField(schema, "amount").required);
  EXPECT_FALSE(FindDeclaredField(schema, "memo").required);
  EXPECT_NE(FindDeclaredField(schema, "memo").schema, nullptr);
  EXPECT_TRUE(FindDeclaredField(schema, "card.number").required);
  EXPECT_FALSE(FindDeclaredField(schema, "card.cvc").required);
  EXPECT_EQ(FindDeclaredField(schema, "card.pin").schema, nullptr);
  EXPECT_THAT(DeclaredFieldPaths(schema), ElementsAre("amount", "memo", "card.number", "card.cvc"));
}

}  // namespace
}  // namespace reckon
