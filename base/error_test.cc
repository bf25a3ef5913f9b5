#include "reckon/base/error.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace reckon {
namespace {

TEST(Error, ActionOfFollowsTheTableInTheHeader) {
  const std::vector<std::pair<Errc, ErrorAction>> table = {
      {Errc::kUnavailable, ErrorAction::kRetry},
      {Errc::kResourceExhausted, ErrorAction::kRetry},
      {Errc::kDeadlineExceeded, ErrorAction::kRetry},
      {Errc::kInvalidArgument, ErrorAction::kDoNotRetry},
      {Errc::kNotFound, ErrorAction::kDoNotRetry},
      {Errc::kAlreadyExists, ErrorAction::kDoNotRetry},
      {Errc::kPermissionDenied, ErrorAction::kDoNotRetry},
      {Errc::kUnimplemented, ErrorAction::kDoNotRetry},
      {Errc::kConflict, ErrorAction::kFixStateFirst},
      {Errc::kFailedPrecondition, ErrorAction::kFixStateFirst},
      {Errc::kNondeterminism, ErrorAction::kFixStateFirst},
      {Errc::kInternal, ErrorAction::kBug},
      {Errc::kCorruption, ErrorAction::kBug},
  };
  std::set<std::string_view> names;
  for (const auto& [code, action] : table) {
    EXPECT_EQ(ActionOf(code), action) << ErrcName(code);
    EXPECT_EQ(Error(code, "m").action(), action) << ErrcName(code);
    names.insert(ErrcName(code));
  }
  EXPECT_EQ(names.size(), table.size()) << "code names must be distinct";
}

TEST(Error, NamesAreStableLowerSnakeCase) {
  EXPECT_EQ(ErrcName(Errc::kInvalidArgument), "invalid_argument");
  EXPECT_EQ(ErrcName(Errc::kFailedPrecondition), "failed_precondition");
  EXPECT_EQ(ErrcName(Errc::kCorruption), "corruption");
  EXPECT_EQ(ErrorActionName(ErrorAction::kRetry), "retry");
  EXPECT_EQ(ErrorActionName(ErrorAction::kDoNotRetry), "do_not_retry");
  EXPECT_EQ(ErrorActionName(ErrorAction::kFixStateFirst), "fix_state_first");
  EXPECT_EQ(ErrorActionName(ErrorAction::kBug), "bug");
}

TEST(Error, ToStringPrefixesTheCodeName) {
  const Error error(Errc::kInvalidArgument,
                    "step 'refund': field 'amount_cents' must be an integer");
  EXPECT_EQ(error.ToString(),
            "invalid_argument: step 'refund': field 'amount_cents' must be an integer");
  EXPECT_EQ(Error(Errc::kNotFound, "").ToString(), "not_found: ");
}

TEST(Error, WithContextPrefixesTheMessageAndKeepsTheCode) {
  const Error original = Err(Errc::kConflict, "version 3 != 4");
  const Error wrapped = original.WithContext("workflow 'w1'");
  EXPECT_EQ(wrapped.code(), Errc::kConflict);
  EXPECT_EQ(wrapped.message(), "workflow 'w1': version 3 != 4");
  EXPECT_EQ(wrapped.WithContext("start").ToString(),
            "conflict: start: workflow 'w1': version 3 != 4");
  EXPECT_EQ(original.message(), "version 3 != 4") << "WithContext returns a copy";
}

TEST(Error, EqualityComparesCodeAndMessage) {
  EXPECT_EQ(Err(Errc::kInternal, "x"), Error(Errc::kInternal, "x"));
  EXPECT_NE(Err(Errc::kInternal, "x"), Error(Errc::kCorruption, "x"));
  EXPECT_NE(Err(Errc::kInternal, "x"), Error(Errc::kInternal, "y"));
}

Result<int> Half(int n) {
  if (n % 2 != 0) return Err(Errc::kInvalidArgument, std::to_string(n) + " is odd");
  return n / 2;
}

Result<int> Quarter(int n) {
  RECKON_TRY(const int half, Half(n));
  return Half(half);
}

Result<void> CheckEven(int n) {
  RECKON_TRY(Half(n));
  return Ok();
}

TEST(Result, TryPropagatesTheFirstError) {
  EXPECT_EQ(Quarter(8).value(), 2);
  ASSERT_FALSE(Quarter(6));
  EXPECT_EQ(Quarter(6).error(), Err(Errc::kInvalidArgument, "3 is odd"));
  EXPECT_TRUE(CheckEven(4));
  EXPECT_EQ(CheckEven(5).error().message(), "5 is odd");
}

}  // namespace
}  // namespace reckon
