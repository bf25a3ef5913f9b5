#include "reckon/engine/operation_state.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <utility>

namespace reckon {
namespace {

using S = OperationState;
using I = OperationInput;

// The lifecycle of docs/ARCHITECTURE.md ("Operation states"), written out independently of the table in operation_state.cc.
const std::map<std::pair<S, I>, S>& ExpectedEdges() {
  static const std::map<std::pair<S, I>, S> edges = {
      {{S::kPrepared, I::kApprovalRequested}, S::kAwaitingApproval},
      {{S::kRetryScheduled, I::kApprovalRequested}, S::kAwaitingApproval},
      {{S::kAwaitingApproval, I::kApprovalGranted}, S::kApproved},
      {{S::kAwaitingApproval, I::kApprovalDenied}, S::kRejected},
      {{S::kPrepared, I::kAttemptStarted}, S::kInFlight},
      {{S::kApproved, I::kAttemptStarted}, S::kInFlight},
      {{S::kRetryScheduled, I::kAttemptStarted}, S::kInFlight},
      {{S::kInFlight, I::kCommitted}, S::kCommitted},
      {{S::kInFlight, I::kRejected}, S::kRejected},
      {{S::kInFlight, I::kRetryableFailure}, S::kRetryScheduled},
      {{S::kInFlight, I::kOutcomeUnknown}, S::kOutcomeUnknown},
      {{S::kPrepared, I::kRejected}, S::kRejected},
      {{S::kRetryScheduled, I::kRejected}, S::kRejected},
      {{S::kOutcomeUnknown, I::kRetryScheduled}, S::kRetryScheduled},
      {{S::kOutcomeUnknown, I::kReconciliationStarted}, S::kReconciling},
      {{S::kOutcomeUnknown, I::kNeedsHuman}, S::kNeedsHuman},
      {{S::kOutcomeUnknown, I::kRejected}, S::kRejected},
      {{S::kReconciling, I::kCommitted}, S::kCommitted},
      {{S::kReconciling, I::kRetryScheduled}, S::kRetryScheduled},
      {{S::kReconciling, I::kStillUnknown}, S::kOutcomeUnknown},
      {{S::kReconciling, I::kNeedsHuman}, S::kNeedsHuman},
      {{S::kReconciling, I::kRejected}, S::kRejected},
      {{S::kNeedsHuman, I::kCommitted}, S::kCommitted},
      {{S::kNeedsHuman, I::kRetryScheduled}, S::kRetryScheduled},
      {{S::kNeedsHuman, I::kRejected}, S::kRejected},
      {{S::kOutcomeUnknown, I::kCommitted}, S::kCommitted},
      {{S::kRetryScheduled, I::kCommitted}, S::kCommitted},
      {{S::kAwaitingApproval, I::kCommitted}, S::kCommitted},
      {{S::kApproved, I::kCommitted}, S::kCommitted},
      // Asynchronous completion.
      {{S::kInFlight, I::kAccepted}, S::kAwaitingCompletion},
      {{S::kAwaitingCompletion, I::kCommitted}, S::kCommitted},
      {{S::kAwaitingCompletion, I::kRejected}, S::kRejected},
      {{S::kAwaitingCompletion, I::kRetryableFailure}, S::kRetryScheduled},
      {{S::kAwaitingCompletion, I::kOutcomeUnknown}, S::kOutcomeUnknown},
  };
  return edges;
}

TEST(OperationStateTest, EveryLegalEdgeIsAccepted) {
  for (const auto& [edge, to] : ExpectedEdges()) {
    auto next = Transition(edge.first, edge.second);
    ASSERT_TRUE(next) << OperationStateName(edge.first) << " + "
                      << OperationInputName(edge.second) << ": " << next.error().ToString();
    EXPECT_EQ(next.value(), to) << OperationStateName(edge.first) << " + "
                                << OperationInputName(edge.second);
  }
}

TEST(OperationStateTest, EveryOtherEdgeIsRefused) {
  int refused = 0;
  for (int s = 0; s < kOperationStateCount; ++s) {
    for (int i = 0; i < kOperationInputCount; ++i) {
      auto key = std::make_pair(static_cast<S>(s), static_cast<I>(i));
      if (ExpectedEdges().count(key)) continue;
      auto next = Transition(key.first, key.second);
      ASSERT_FALSE(next) << OperationStateName(key.first) << " + "
                         << OperationInputName(key.second) << " must be illegal";
      EXPECT_EQ(next.error().code(), Errc::kInternal);
      EXPECT_NE(next.error().message().find(OperationStateName(key.first)), std::string::npos);
      ++refused;
    }
  }
  EXPECT_EQ(refused + int(ExpectedEdges().size()), kOperationStateCount * kOperationInputCount);
}

TEST(OperationStateTest, TerminalStatesHaveNoWayOut) {
  for (S terminal : {S::kCommitted, S::kRejected}) {
    EXPECT_TRUE(IsTerminal(terminal));
    for (int i = 0; i < kOperationInputCount; ++i) {
      EXPECT_FALSE(Transition(terminal, static_cast<I>(i)));
    }
  }
}

TEST(OperationStateTest, NamesRoundTrip) {
  std::set<std::string_view> names;
  for (int s = 0; s < kOperationStateCount; ++s) {
    auto state = static_cast<S>(s);
    names.insert(OperationStateName(state));
    auto parsed = ParseOperationState(OperationStateName(state));
    ASSERT_TRUE(parsed);
    EXPECT_EQ(parsed.value(), state);
  }
  EXPECT_EQ(names.size(), std::size_t(kOperationStateCount));
  EXPECT_FALSE(ParseOperationState("flying"));
}

TEST(OperationStateTest, EventsCarryTheirInputs) {
  using namespace storage;
  EXPECT_EQ(InputOf(AttemptStarted{}), I::kAttemptStarted);
  EXPECT_EQ(InputOf(OperationCommitted{}), I::kCommitted);
  EXPECT_EQ(InputOf(RetryScheduled{}), I::kRetryScheduled);
  EXPECT_EQ(InputOf(ReconciliationResult{"op", 1, ReconcileVerdict::kStillUnknown, "", 0}),
            I::kStillUnknown);
  EXPECT_EQ(InputOf(ReconciliationResult{"op", 1, ReconcileVerdict::kCommitted, "re_1", 0}),
            std::nullopt);
  EXPECT_EQ(InputOf(HumanResolved{}), std::nullopt);
  EXPECT_EQ(InputOf(TimerFired{}), std::nullopt);
}

}  // namespace
}  // namespace reckon
