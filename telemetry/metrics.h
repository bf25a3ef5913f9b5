// MetricsRegistry: counters, gauges and histograms with label sets, written out in the
// Prometheus text exposition format 0.0.4 (docs/OPERATIONS.md lists every metric Reckon has).
//
// A family is one metric name with its help text, type and label names; a series is one
// combination of label values within it. Families and series are created on first use and
// live as long as the registry: references returned by Family::With stay valid until the
// registry is destroyed, so a hot path may look a series up once and keep the reference.
//
// Callback metrics (AddGaugeCallback, AddCounterCallback) are evaluated when the text is written (at scrape time),
// for values that some other part owns (a queue's depth, the outbox's backlog). A callback
// runs on the thread that calls WriteText.
//
// Threading rule: updating a series (Inc, Set, Observe) is thread-safe and lock-free (relaxed
// atomics), so the group committer's thread may observe commits while the engine's loop counts
// events. Creating families and series and WriteText take a mutex. WriteText must be called
// where the callbacks may run: in the server and embedded hosts, that is the engine's
// event loop, whose state the callbacks read without locks.
//
// Names must match [a-zA-Z_:][a-zA-Z0-9_:]* and label names [a-zA-Z_][a-zA-Z0-9_]*; a bad
// name, or registering a name twice with another type or other labels, is a bug (throws
// std::logic_error at registration, never at update).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace reckon {

class MetricCounter {
 public:
  void Inc(std::uint64_t by = 1) { value_.fetch_add(by, std::memory_order_relaxed); }
  std::uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> value_{0};
};

class MetricGauge {
 public:
  void Set(double value) { value_.store(value, std::memory_order_relaxed); }
  void Add(double by);
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// Fixed upper bounds, ascending; the +Inf bucket is implicit.
class MetricHistogram {
 public:
  explicit MetricHistogram(const std::vector<double>& bounds);
  void Observe(double value);

  struct Snapshot {
    std::vector<std::uint64_t> cumulative;  // one per bound, then +Inf (== count)
    double sum = 0;
    std::uint64_t count = 0;
  };
  Snapshot snapshot() const;

 private:
  const std::vector<double>& bounds_;  // the family's, which outlives the series
  std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;  // not cumulative; last is +Inf
  std::atomic<double> sum_{0};
  std::atomic<std::uint64_t> count_{0};
};

enum class MetricType { kCounter, kGauge, kHistogram };

// One metric name and its series, by label values (in the order of the label names).
template <class Series>
class MetricFamily {
 public:
  // The series with these label values, created at first use. `values` must have one value
  // per label name (else std::logic_error). Thread-safe.
  Series& With(const std::vector<std::string>& values);
  // The series of a family without labels.
  Series& Get() { return With({}); }

 private:
  friend class MetricsRegistry;
  MetricFamily(std::string name, std::string help, std::vector<std::string> labels,
               std::vector<double> bounds)
      : name_(std::move(name)), help_(std::move(help)), labels_(std::move(labels)),
        bounds_(std::move(bounds)) {}

  std::string name_;
  std::string help_;
  std::vector<std::string> labels_;
  std::vector<double> bounds_;  // histograms only
  mutable std::mutex mutex_;
  std::map<std::vector<std::string>, std::unique_ptr<Series>> series_;  // guarded by mutex_
};

using CounterFamily = MetricFamily<MetricCounter>;
using GaugeFamily = MetricFamily<MetricGauge>;
using HistogramFamily = MetricFamily<MetricHistogram>;

// One sample a gauge callback reports: label values (one per label name) and the value.
struct GaugeSample {
  std::vector<std::string> labels;
  double value = 0;
};
using GaugeCallback = std::function<std::vector<GaugeSample>()>;

class MetricsRegistry {
 public:
  MetricsRegistry() = default;
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  // Registers a family, or returns the one already registered under `name` with the same type
  // and label names. Counter names should end in _total.
  CounterFamily& Counter(std::string name, std::string help, std::vector<std::string> labels = {});
  GaugeFamily& Gauge(std::string name, std::string help, std::vector<std::string> labels = {});
  HistogramFamily& Histogram(std::string name, std::string help, std::vector<double> bounds,
                             std::vector<std::string> labels = {});
  // A gauge whose samples `callback` computes at each WriteText. The callback must stay
  // callable as long as the registry lives, or until RemoveGaugeCallback(name).
  void AddGaugeCallback(std::string name, std::string help, std::vector<std::string> labels,
                        GaugeCallback callback);
  // The same for a counter some other part keeps (e.g. spans an exporter dropped): the
  // callback must report values that never decrease while the process lives.
  void AddCounterCallback(std::string name, std::string help, std::vector<std::string> labels,
                          GaugeCallback callback);
  // Removes a callback metric of either kind (before what its callback reads goes away).
  void RemoveCallback(const std::string& name);

  // Every family, in registration order, in the text format (Content-Type kContentType).
  std::string WriteText() const;

  static constexpr std::string_view kContentType = "text/plain; version=0.0.4; charset=utf-8";

 private:
  struct Entry {
    MetricType type;
    std::string name;
    std::string help;
    std::vector<std::string> labels;
    std::unique_ptr<CounterFamily> counter;
    std::unique_ptr<GaugeFamily> gauge;
    std::unique_ptr<HistogramFamily> histogram;
    GaugeCallback callback;  // a callback gauge when set
  };
  Entry& Register(MetricType type, std::string name, std::string help,
                  std::vector<std::string> labels);
  void AddCallback(MetricType type, std::string name, std::string help,
                   std::vector<std::string> labels, GaugeCallback callback);

  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Entry>> entries_;  // guarded by mutex_
};

// Text-format pieces, exposed for tests: a label value with \, " and newline escaped, help
// text with \ and newline escaped, and a sample value (integers without exponent, +Inf, -Inf,
// NaN).
std::string EscapeLabelValue(std::string_view value);
std::string EscapeHelp(std::string_view help);
std::string FormatSampleValue(double value);

// Bucket bounds for durations in seconds, 100 µs to 10 s.
std::vector<double> LatencyBuckets();

}  // namespace reckon
