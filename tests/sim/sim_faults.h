// SimFaults: how hostile one seed's world is, and what it did. A seed draws its fault rates
// (Draw): some seeds are calm, some are storms, so the seeds together cover both a rare fault
// in a quiet system and faults that pile up. Faults are injected only while `active` (the
// fault window); after it the world is calm, which is when liveness is judged.
//
// SimCounts counts every fault injected, per kind, for the report and docs/TESTING.md.
// Plain values.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "tests/sim/sim_rng.h"

namespace reckon::sim {

struct SimFaults {
  bool active = true;
  // The network between the server and its workers, per message.
  double drop = 0;       // lost
  double duplicate = 0;  // delivered twice
  double slow = 0;       // delayed by up to 150 ms (others: 0.1-2 ms), which also reorders
  // The provider, per call.
  double reply_lost = 0;    // commits, and the reply never comes back
  double lose_request = 0;  // the call fails before reaching the ledger (connection reset)
  double refuse = 0;        // 429 before committing (retryable)
  double reject = 0;        // a definitive refusal (card_declined)
  double lookup_late = 0;   // a lookup that cannot tell yet (still_unknown)
  // The server's journal, per commit.
  double commit_fail = 0;   // fails before writing (the engine stops; restarted)
  double sync_fail = 0;     // writes, then reports failure (outcome unknown; restarted)
  double commit_slow = 0;   // takes up to 80 ms of simulated time
  // Processes, per 10 ms of simulated time.
  double engine_crash = 0;
  double worker_crash = 0;
  double worker_pause = 0;  // 30-150 ms, past the 20 ms lease
  // People, per approval they look at.
  double confused_grant = 0;  // grants the intent of another operation

  static SimFaults Draw(SimRng& rng) {
    // 0: calm, 1: moderate, 2: storm, per family, so families combine differently per seed.
    auto level = [&rng] { return static_cast<double>(rng.Below(3)); };
    SimFaults f;
    const double net = level(), provider = level(), disk = level(), process = level(),
                 people = level();
    f.drop = 0.03 * net;
    f.duplicate = 0.03 * net;
    f.slow = 0.06 * net;
    f.reply_lost = 0.08 * provider;
    f.lose_request = 0.03 * provider;
    f.refuse = 0.04 * provider;
    f.reject = 0.02 * provider;
    f.lookup_late = 0.15 * provider;
    f.commit_fail = 0.004 * disk;
    f.sync_fail = 0.004 * disk;
    f.commit_slow = 0.03 * disk;
    f.engine_crash = 0.01 * process;
    f.worker_crash = 0.01 * process;
    f.worker_pause = 0.02 * process;
    f.confused_grant = 0.15 * people;
    return f;
  }
};

class SimCounts {
 public:
  void Add(const std::string& kind, std::int64_t n = 1) { counts_[kind] += n; }
  std::int64_t Get(const std::string& kind) const {
    auto it = counts_.find(kind);
    return it == counts_.end() ? 0 : it->second;
  }
  const std::map<std::string, std::int64_t>& all() const { return counts_; }

 private:
  std::map<std::string, std::int64_t> counts_;
};

}  // namespace reckon::sim
