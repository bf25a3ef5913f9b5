// Assertions on Result<T> that print the error when they fail.
#pragma once

#include <gtest/gtest.h>

#define RECKON_ASSERT_OK(expr)                               \
  do {                                                       \
    auto&& reckon_result_ = (expr);                          \
    ASSERT_TRUE(reckon_result_) << reckon_result_.error().ToString(); \
  } while (0)

#define RECKON_EXPECT_OK(expr)                               \
  do {                                                       \
    auto&& reckon_result_ = (expr);                          \
    EXPECT_TRUE(reckon_result_) << reckon_result_.error().ToString(); \
  } while (0)
