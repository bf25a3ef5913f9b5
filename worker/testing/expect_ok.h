// Assertions on Result<T> that print the error when they fail: the public test library's
// GoogleTest helpers (testkit/gtest.h), which Reckon's own tests use too.
#pragma once

#include "reckon/testkit/gtest.h"
