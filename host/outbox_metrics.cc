#include "reckon/host/outbox_metrics.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace reckon {
namespace {

constexpr char kPending[] = "reckon_outbox_pending";
constexpr char kOldestAge[] = "reckon_outbox_oldest_age_seconds";
constexpr char kAttempts[] = "reckon_outbox_attempts_total";

}  // namespace

OutboxMetrics::OutboxMetrics(MetricsRegistry& registry,
                             std::unique_ptr<storage::OutboxStore> store,
                             const outbox::Dispatcher* dispatcher, Clock& clock)
    : registry_(registry), store_(std::move(store)), dispatcher_(dispatcher), clock_(clock) {
  registry_.AddGaugeCallback(kPending, "Outbox messages not yet acknowledged by the broker.", {},
                             [this] { return Pending(); });
  registry_.AddCounterCallback(
      kAttempts,
      "Outbox delivery attempts by result: acked, duplicate (the broker had it), failed.",
      {"result"}, [this] { return Attempts(); });
  registry_.AddGaugeCallback(kOldestAge,
                             "Age of the oldest unacknowledged outbox message, or 0.", {},
                             [this] { return OldestAge(); });
}

OutboxMetrics::~OutboxMetrics() {
  for (const char* name : {kPending, kAttempts, kOldestAge}) registry_.RemoveCallback(name);
}

std::vector<GaugeSample> OutboxMetrics::Pending() {
  auto backlog = store_->PendingBacklog();
  if (!backlog) {
    spdlog::warn("metrics: cannot read the outbox backlog: {}", backlog.error().ToString());
    return {};
  }
  return {{{}, static_cast<double>(backlog.value().pending)}};
}

std::vector<GaugeSample> OutboxMetrics::OldestAge() {
  auto backlog = store_->PendingBacklog();
  if (!backlog) return {};  // Pending() said why
  if (backlog.value().pending == 0) return {{{}, 0.0}};
  const std::int64_t age_us =
      std::max<std::int64_t>(0, clock_.NowMicros() - backlog.value().oldest_created_at_us);
  return {{{}, static_cast<double>(age_us) / 1e6}};
}

std::vector<GaugeSample> OutboxMetrics::Attempts() const {
  outbox::DispatcherStats stats;
  if (dispatcher_ != nullptr) stats = dispatcher_->stats();
  return {{{"acked"}, static_cast<double>(stats.acked - stats.duplicates)},
          {{"duplicate"}, static_cast<double>(stats.duplicates)},
          {{"failed"}, static_cast<double>(stats.failed)}};
}

}  // namespace reckon
