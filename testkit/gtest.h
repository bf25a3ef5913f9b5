// Optional GoogleTest helpers for tests of Reckon code: assertions on Result<T> that print the
// error when they fail. Header-only; include it only in a test linked with GoogleTest (the rest
// of reckon::testkit needs no test framework).
//
//   RECKON_ASSERT_OK(env.Start("order-1", "place_order", input));
//   RECKON_ASSERT_OK_AND_ASSIGN(reckon::RunSummary run, env.RunUntilSettled("order-1"));
//
// Each expands to several statements: never use one as the body of an unbraced if or for.
// The ASSERT forms return from the current function, as ASSERT_TRUE does (void functions only).
#pragma once

#include <gtest/gtest.h>

#include <utility>

#define RECKON_ASSERT_OK(expr)                                        \
  do {                                                                \
    auto&& reckon_result_ = (expr);                                   \
    ASSERT_TRUE(reckon_result_) << reckon_result_.error().ToString(); \
  } while (0)

#define RECKON_EXPECT_OK(expr)                                        \
  do {                                                                \
    auto&& reckon_result_ = (expr);                                   \
    EXPECT_TRUE(reckon_result_) << reckon_result_.error().ToString(); \
  } while (0)

// Declares or assigns `lhs` from the value of a Result `expr`, or fails the test with its error.
#define RECKON_ASSERT_OK_AND_ASSIGN(lhs, expr) \
  RECKON_TESTKIT_ASSIGN_(RECKON_TESTKIT_CONCAT_(reckon_result_, __LINE__), lhs, expr)

#define RECKON_TESTKIT_CONCAT_INNER_(a, b) a##b
#define RECKON_TESTKIT_CONCAT_(a, b) RECKON_TESTKIT_CONCAT_INNER_(a, b)
#define RECKON_TESTKIT_ASSIGN_(tmp, lhs, expr)   \
  auto tmp = (expr);                             \
  ASSERT_TRUE(tmp) << tmp.error().ToString();    \
  lhs = std::move(tmp).value()
