// Test support for the contract card's behaviour tests (tests/card): the card's facts for one
// question, and one embedded run (testkit/test_env.h) of a workflow that makes one call, with
// what the engine journaled for it.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <string>
#include <string_view>

#include "reckon/base/error.h"
#include "reckon/contract/contract.h"
#include "reckon/storage/event.h"
#include "reckon/testkit/test_env.h"

namespace reckon::testing {

// The "facts" of the card's question `key` ("operation_id", "errors", "approval").
boost::json::object CardFacts(const ToolContract& contract, const std::string& key);

// The namespace every run of MakeCardEnv derives its ids from.
inline constexpr char kCardNamespace[] = "card-ns";

// A TestEnv whose clock moves only when told (tools here wait on real I/O), with the ids
// namespaced by kCardNamespace and the workflow "call_one" registered: it calls
// input.tool with input.input at step input.step and returns the provider's reference.
std::unique_ptr<testkit::TestEnv> MakeCardEnv();

// What one finished run of call_one journaled.
struct CardRun {
  storage::RunRef ref;
  storage::WorkflowStarted started;
  storage::OperationPrepared prepared;
};

// Starts call_one as `workflow_id`, runs it to its end and reads its journal; an error if it
// did not complete. `secrets` ({"dotted.path": value}) are set in the call's input by the
// workflow, not passed in its input.
Result<CardRun> RunCallOne(testkit::TestEnv& env, const std::string& workflow_id,
                           const std::string& tool, const std::string& step,
                           boost::json::value input, boost::json::object secrets = {});

// Sets the member at the dotted `path` of `input` to `value`, making objects on the way.
void SetField(boost::json::value& input, std::string_view path, const boost::json::value& value);

}  // namespace reckon::testing
