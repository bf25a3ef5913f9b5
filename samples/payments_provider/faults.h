// FaultPlan: the provider's injected failures, drawn from a seeded RNG so that a run is
// reproducible: the same seed and the same order of refund requests give the same faults.
// Exactly two numbers are drawn per call to Next(), whatever the rates, so changing one rate
// does not shift the other's sequence. Not thread-safe (owned by the provider's one thread).
#pragma once

#include <cstdint>
#include <random>

namespace reckon::samples::provider {

struct FaultRates {
  double fail_before_commit = 0;  // reply 503 provider_unavailable, commit nothing
  double drop_reply = 0;          // commit, then close the connection without replying
};

struct Faults {
  bool fail_before_commit = false;
  bool drop_reply = false;  // only meaningful when !fail_before_commit
};

class FaultPlan {
 public:
  FaultPlan(std::uint64_t seed, FaultRates rates) : rng_(seed), rates_(rates) {}

  // The faults for the next new refund (rates <= 0 never fire, rates >= 1 always do).
  Faults Next();

 private:
  double Uniform();  // [0, 1), from the top 53 bits: the same on every platform

  std::mt19937_64 rng_;
  FaultRates rates_;
};

}  // namespace reckon::samples::provider
