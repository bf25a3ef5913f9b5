// OutboxMetrics: the transactional outbox as Prometheus metrics (docs/OPERATIONS.md), through
// callbacks on the host's MetricsRegistry:
//
//   reckon_outbox_pending             gauge    messages the broker has not acknowledged
//   reckon_outbox_oldest_age_seconds  gauge    age of the oldest of them, or 0
//   reckon_outbox_attempts_total      counter  delivery attempts by result: acked, duplicate
//                                              (acked, the broker had it already), failed
//
// The two gauges are read at each scrape from the outbox table, through a store connection of
// its own (OutboxStore::PendingBacklog: an index walk over the pending messages only), so they
// are right even in a process that runs no dispatcher, and after a restart. The counter comes
// from the dispatcher's own counts (since this process started, as Prometheus expects); it is
// 0 without a dispatcher. A scrape whose query fails reports no sample for the gauges and
// logs why.
//
// Threading: the callbacks run where the registry's WriteText runs (the engine's loop); the
// store is used there only. Ownership: owns the store; the registry and the dispatcher are
// borrowed and must outlive this object, which removes its callbacks when destroyed.
#pragma once

#include <memory>

#include "reckon/engine/clock.h"
#include "reckon/outbox/dispatcher.h"
#include "reckon/storage/outbox_store.h"
#include "reckon/telemetry/metrics.h"

namespace reckon {

class OutboxMetrics {
 public:
  // `dispatcher` may be null (no broker configured: messages wait, nothing is attempted).
  OutboxMetrics(MetricsRegistry& registry, std::unique_ptr<storage::OutboxStore> store,
                const outbox::Dispatcher* dispatcher, Clock& clock);
  ~OutboxMetrics();
  OutboxMetrics(const OutboxMetrics&) = delete;
  OutboxMetrics& operator=(const OutboxMetrics&) = delete;

 private:
  std::vector<GaugeSample> Pending();
  std::vector<GaugeSample> OldestAge();
  std::vector<GaugeSample> Attempts() const;

  MetricsRegistry& registry_;
  std::unique_ptr<storage::OutboxStore> store_;
  const outbox::Dispatcher* dispatcher_;
  Clock& clock_;
};

}  // namespace reckon
