// SimNetwork: the simulated network between the server and its workers. A message is a
// function run at its arrival; while faults are active it may be lost, arrive twice, or be
// slow (which reorders it behind later ones). A calm network still has a latency of 0.1-2 ms,
// drawn per message, so messages of one seed interleave differently from those of another.
//
// A message does not know whether its receiver still lives: a receiver checks at arrival
// (a crashed process's connections died with it). Not thread-safe.
#pragma once

#include <functional>
#include <string>

#include "reckon/engine/clock.h"
#include "tests/sim/sim_faults.h"
#include "tests/sim/sim_rng.h"
#include "tests/sim/sim_scheduler.h"

namespace reckon::sim {

class SimNetwork {
 public:
  SimNetwork(SimScheduler& agenda, Clock& clock, SimRng& rng, const SimFaults& faults,
             SimCounts& counts)
      : agenda_(agenda), clock_(clock), rng_(rng), faults_(faults), counts_(counts) {}

  void Send(const std::function<void()>& deliver) {
    counts_.Add("net.messages");
    if (faults_.active && rng_.Chance(faults_.drop)) {
      counts_.Add("fault.net_dropped");
      return;
    }
    agenda_.At(clock_.NowMicros() + Latency(), deliver);
    if (faults_.active && rng_.Chance(faults_.duplicate)) {
      counts_.Add("fault.net_duplicated");
      agenda_.At(clock_.NowMicros() + Latency(), deliver);
    }
  }

 private:
  std::int64_t Latency() {
    if (faults_.active && rng_.Chance(faults_.slow)) {
      counts_.Add("fault.net_slow");
      return rng_.Between(5'000, 150'000);
    }
    return rng_.Between(100, 2'000);
  }

  SimScheduler& agenda_;
  Clock& clock_;
  SimRng& rng_;
  const SimFaults& faults_;
  SimCounts& counts_;
};

}  // namespace reckon::sim
