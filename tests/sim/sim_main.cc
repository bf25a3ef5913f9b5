// reckon-sim: runs the deterministic simulation (tests/sim/sim_world.h) from the command line.
//
//   reckon-sim --seed N                one seed, with its full event log on stdout
//   reckon-sim --seeds FIRST COUNT     many seeds, one summary line each failing one
//   ... --mutant NAME                  with a deliberate engine bug (tests/sim/sim_mutants.h)
//
// Exit status: 0 when every seed held every invariant, 1 when one did not, 2 for bad usage.
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>

#include <spdlog/spdlog.h>

#include "tests/sim/sim_mutants.h"
#include "tests/sim/sim_world.h"

namespace {

int Usage(const std::string& why) {
  std::cerr << "reckon-sim: " << why << "\n"
            << "usage: reckon-sim --seed N [--mutant NAME]\n"
            << "       reckon-sim --seeds FIRST COUNT [--mutant NAME]\n"
            << "mutants: none";
  for (const auto& m : reckon::sim::Mutants()) std::cerr << ", " << m.name;
  std::cerr << "\n";
  return 2;
}

bool ParseCount(const char* text, std::uint64_t& out) {
  char* end = nullptr;
  out = std::strtoull(text, &end, 10);
  return end != text && *end == '\0';
}

}  // namespace

int main(int argc, char** argv) {
  using namespace reckon::sim;
  std::uint64_t first = 0, count = 0;
  bool one = false;
  reckon::DeciderMutant mutant = reckon::DeciderMutant::kNone;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--seed" && i + 1 < argc) {
      if (!ParseCount(argv[++i], first)) return Usage("--seed wants a number");
      count = 1;
      one = true;
    } else if (arg == "--seeds" && i + 2 < argc) {
      if (!ParseCount(argv[i + 1], first) || !ParseCount(argv[i + 2], count)) {
        return Usage("--seeds wants two numbers: the first seed and how many");
      }
      i += 2;
    } else if (arg == "--mutant" && i + 1 < argc) {
      auto parsed = ParseMutant(argv[++i]);
      if (!parsed) return Usage(std::string("no mutant named '") + argv[i] + "'");
      mutant = *parsed;
    } else {
      return Usage("unknown argument '" + arg + "'");
    }
  }
  if (count == 0) return Usage("say which seeds to run");
  // The engine logs every injected commit failure as critical: noise for a sweep of seeds.
  spdlog::set_level(one ? spdlog::level::warn : spdlog::level::off);
  int failed = 0;
  std::int64_t faults = 0;
  for (std::uint64_t seed = first; seed < first + count; ++seed) {
    SimReport report = RunSeed(SimOptions{.seed = seed, .mutant = mutant,
                                          .log = one ? &std::cout : nullptr});
    faults += report.faults;
    if (one || !report.violations.empty()) std::cout << report.Summary() << "\n";
    if (!report.violations.empty()) ++failed;
  }
  if (!one) {
    std::cout << count << " seeds from " << first << ": " << failed << " violated, " << faults
              << " faults injected\n";
  }
  return failed == 0 ? 0 : 1;
}
