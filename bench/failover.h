// Failover benchmark (server_bench --failover): how long a cluster's shard goes unserved when
// the server owning it is SIGKILLed.
//
// Each repeat starts a fresh cluster (`servers` servers on a new database of `postgres`,
// bench_worker processes connected to all), waits until the shards are balanced, and keeps
// workflows running: a light W3-like load of ten_calls (concurrency `load`, through a patient
// client that follows redirects and retries during the failover) and one "ticker" run (a noop
// call and a 50 ms durable timer, over and over) whose shard decides the victim. Once the
// ticker has recorded events (and, repeat i of R, (i + 1/2) / R of a membership period later,
// so that the kills fall evenly over the period), the owner of its shard is SIGKILLed and,
// polling the journal
// through connections of the benchmark's own every 5 ms, it measures from the SIGKILL to:
//   (a) the lease table naming a new, live owner of that shard;
//   (b) the first event of the ticker's run recorded after the kill (committed by the new
//       owner: the old one is dead, and its last transaction, if any was in flight, is
//       recorded before the kill);
//   (c) every shard of the victim owned by a live server again.
// Then min / median / max over the repeats, per lease setting, with the number of ten_calls
// runs of the load that failed (0 expected: the patient client waits the failover out).
//
// The time includes the lease's expiry (the victim renewed at most lease/3 before the kill),
// the survivors' next membership tick (every lease/3), the takeover and the recovery of the
// shard's runs, and the timer or call the ticker then re-runs.
#pragma once

#include <string>
#include <vector>

#include "bench/bench_deployment.h"

namespace reckon::bench {

struct FailoverOptions {
  DeploymentOptions deployment;  // postgres, reckon, worker binary, dir, workers, tls
  int servers = 2;
  std::vector<int> lease_ms = {3000, 1500};
  int repeats = 5;
  int load = 8;  // concurrent ten_calls loops during the failover
};

// Prints each repeat and the summary per lease setting. Returns 0, or 1 when a repeat failed
// (it says why).
int RunFailover(FailoverOptions options);

}  // namespace reckon::bench
