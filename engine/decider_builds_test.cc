// The decider journals the build that ran a run's code only when it changes
// (engine/decider_builds.cc), and a fold of the journal gives it back (RunState::last_build).
#include <gtest/gtest.h>

#include <boost/json/value.hpp>

#include "reckon/engine/decider.h"

namespace reckon {
namespace {

using namespace storage;

const TimePoint kT0 = FromMicros(1'700'000'000'000'000);

TEST(DeciderBuildsTest, TheBuildIsJournaledWhenItChangesAndFoldsBack) {
  ContractRegistry contracts;
  RunState state{RunRef{"wf-1", "r1"}};
  std::vector<Event> history;
  auto batch = [&](const std::string& worker, const std::string& build) {
    Decider d(state, contracts, kT0);
    if (!state.started()) {
      EXPECT_TRUE(d.Start("wf", boost::json::object{}));
    }
    EXPECT_TRUE(d.WorkflowTaskRan(WorkflowTaskStarted{worker, build}));
    EXPECT_TRUE(d.ApplyCommands({}));
    history.insert(history.end(), d.events().begin(), d.events().end());
    std::size_t journaled = 0;
    for (const Event& e : d.events()) {
      journaled += std::holds_alternative<WorkflowTaskStarted>(e.body) ? 1 : 0;
    }
    return journaled;
  };
  EXPECT_EQ(state.last_build(), std::nullopt);
  EXPECT_EQ(batch("w-1", "v1"), 1u);
  EXPECT_EQ(state.last_build(), std::optional<std::string>("v1"));
  EXPECT_EQ(batch("w-2", "v1"), 0u) << "another worker of the same build adds nothing";
  EXPECT_EQ(batch("w-3", "v2"), 1u) << "a compatible worker of another build is recorded";
  EXPECT_EQ(state.last_build(), std::optional<std::string>("v2"));

  RunState folded{RunRef{"wf-1", "r1"}};
  ASSERT_TRUE(folded.ApplyAll(history));
  EXPECT_EQ(folded.last_build(), std::optional<std::string>("v2"));
}

TEST(DeciderBuildsTest, AnUnversionedWorkerOnAnUnpinnedRunJournalsNothing) {
  ContractRegistry contracts;
  RunState state{RunRef{"wf-1", "r1"}};
  Decider d(state, contracts, kT0);
  ASSERT_TRUE(d.Start("wf", boost::json::object{}));
  const std::size_t before = d.events().size();
  ASSERT_TRUE(d.WorkflowTaskRan(WorkflowTaskStarted{"w-1", ""}));
  EXPECT_EQ(d.events().size(), before);
  EXPECT_EQ(state.last_build(), std::nullopt);
}

}  // namespace
}  // namespace reckon
