// The fake provider moved to the public test library (testkit/fake_provider.h); Reckon's own
// engine tests use it under its old names.
#pragma once

#include "reckon/testkit/fake_provider.h"

namespace reckon::testing {

using testkit::Behaviour;
using testkit::CallRecord;
using testkit::FakeProvider;
using testkit::LookupAnswer;
using testkit::ProviderTool;
using testkit::Step;

}  // namespace reckon::testing
