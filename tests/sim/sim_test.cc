// The deterministic simulation (tests/sim/sim_world.h) as tests: many seeds must hold every
// invariant, a seed must replay exactly, and each mutant must be caught within a few seeds.
//
// Scale: RECKON_SIM_SEEDS seeds from RECKON_SIM_FIRST_SEED (default 300 from 1; the heavy tier
// runs 10,000). A failing seed is printed with its number; `reckon-sim --seed N` replays it
// with the full event log (docs/TESTING.md, "Deterministic simulation").
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>

#include <spdlog/spdlog.h>

#include "tests/sim/sim_mutants.h"
#include "tests/sim/sim_world.h"

namespace reckon::sim {
namespace {

// The engine logs every injected commit failure as critical: noise over hundreds of seeds.
class QuietLogs : public ::testing::Environment {
 public:
  void SetUp() override { spdlog::set_level(spdlog::level::off); }
};
const auto* const kQuiet = ::testing::AddGlobalTestEnvironment(new QuietLogs);

std::uint64_t FromEnv(const char* name, std::uint64_t fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::strtoull(value, nullptr, 10) : fallback;
}

TEST(SimTest, EverySeedHoldsEveryInvariant) {
  const std::uint64_t first = FromEnv("RECKON_SIM_FIRST_SEED", 1);
  const std::uint64_t seeds = FromEnv("RECKON_SIM_SEEDS", 300);
  const auto began = std::chrono::steady_clock::now();
  std::int64_t faults = 0, lives = 0, batches = 0, runs = 0, max_faults = 0;
  int failed = 0;
  for (std::uint64_t seed = first; seed < first + seeds; ++seed) {
    SimReport report = RunSeed(SimOptions{.seed = seed});
    faults += report.faults;
    max_faults = std::max(max_faults, report.faults);
    lives += report.server_lives;
    batches += report.batches;
    runs += report.runs;
    if (!report.violations.empty()) {
      ++failed;
      ADD_FAILURE() << report.Summary() << "\nreplay it: reckon-sim --seed " << seed;
      if (failed >= 5) break;
    }
  }
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  std::cout << "simulated " << seeds << " seeds from " << first << " in " << wall_s
            << " s wall: " << runs << " runs, " << lives << " server lives, " << batches
            << " batches, " << faults << " faults injected (" << static_cast<double>(faults) / seeds
            << " per seed on average, " << max_faults << " at most)\n";
}

TEST(SimTest, ASeedReplaysExactly) {
  for (std::uint64_t seed : {1, 2, 3, 17, 99}) {
    SimReport a = RunSeed(SimOptions{.seed = seed});
    SimReport b = RunSeed(SimOptions{.seed = seed});
    EXPECT_EQ(a.digest, b.digest) << "seed " << seed << " did not replay:\n"
                                  << a.Summary() << "\n" << b.Summary();
    EXPECT_EQ(a.steps, b.steps) << "seed " << seed;
    EXPECT_GT(a.batches, 0) << "seed " << seed << " committed nothing";
  }
}

TEST(SimTest, SeedsDiffer) {
  EXPECT_NE(RunSeed(SimOptions{.seed = 1}).digest, RunSeed(SimOptions{.seed = 2}).digest);
}

// Each mutant must make some seed violate an invariant: the test fails if the simulator
// misses it. How many seeds it took is printed (and recorded in docs/TESTING.md).
class SimMutantTest : public ::testing::TestWithParam<NamedMutant> {};

TEST_P(SimMutantTest, IsCaught) {
  const NamedMutant mutant = GetParam();
  constexpr std::uint64_t kBudget = 300;
  for (std::uint64_t seed = 1; seed <= kBudget; ++seed) {
    SimReport report = RunSeed(SimOptions{.seed = seed, .mutant = mutant.mutant});
    if (!report.violations.empty()) {
      std::cout << "mutant " << mutant.name << " caught by seed " << seed << " (after " << seed
                << " seeds): " << report.violations.front() << "\n";
      return;
    }
  }
  FAIL() << "mutant " << mutant.name << " survived " << kBudget << " seeds";
}

INSTANTIATE_TEST_SUITE_P(Mutants, SimMutantTest, ::testing::ValuesIn(Mutants()),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace reckon::sim
