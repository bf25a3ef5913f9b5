#include "reckon/telemetry/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace reckon {
namespace {

void AddTo(std::atomic<double>& target, double by) {
  double current = target.load(std::memory_order_relaxed);
  while (!target.compare_exchange_weak(current, current + by, std::memory_order_relaxed)) {
  }
}

bool ValidName(std::string_view name, bool colon) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                       (colon && c == ':');
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

// `{a="x",b="y"}` (with `extra` appended, e.g. le="0.5"), or "" when there are no labels.
std::string LabelText(const std::vector<std::string>& names, const std::vector<std::string>& values,
                      std::string_view extra = {}) {
  if (names.empty() && extra.empty()) return "";
  std::string out = "{";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ',';
    out += names[i];
    out += "=\"";
    out += EscapeLabelValue(values[i]);
    out += '"';
  }
  if (!extra.empty()) {
    if (!names.empty()) out += ',';
    out += extra;
  }
  out += '}';
  return out;
}

void Header(std::string& out, const std::string& name, const std::string& help,
            std::string_view type) {
  out += "# HELP " + name + ' ' + EscapeHelp(help) + '\n';
  out += "# TYPE " + name + ' ' + std::string(type) + '\n';
}

}  // namespace

void MetricGauge::Add(double by) { AddTo(value_, by); }

MetricHistogram::MetricHistogram(const std::vector<double>& bounds)
    : bounds_(bounds), buckets_(new std::atomic<std::uint64_t>[bounds.size() + 1]) {
  for (std::size_t i = 0; i <= bounds.size(); ++i) buckets_[i].store(0);
}

void MetricHistogram::Observe(double value) {
  const auto it = std::lower_bound(bounds_.begin(), bounds_.end(), value);  // first bound >= value
  buckets_[static_cast<std::size_t>(it - bounds_.begin())].fetch_add(1, std::memory_order_relaxed);
  AddTo(sum_, value);
  count_.fetch_add(1, std::memory_order_relaxed);
}

MetricHistogram::Snapshot MetricHistogram::snapshot() const {
  Snapshot s;
  std::uint64_t running = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    s.cumulative.push_back(running);
  }
  s.count = running;  // consistent with the buckets even while observations race the scrape
  s.sum = sum_.load(std::memory_order_relaxed);
  return s;
}

template <class Series>
Series& MetricFamily<Series>::With(const std::vector<std::string>& values) {
  if (values.size() != labels_.size()) {
    throw std::logic_error("metric " + name_ + " has " + std::to_string(labels_.size()) +
                           " label(s), given " + std::to_string(values.size()) + " value(s)");
  }
  std::lock_guard lock(mutex_);
  auto& slot = series_[values];
  if (!slot) {
    if constexpr (std::is_same_v<Series, MetricHistogram>) {
      slot = std::make_unique<MetricHistogram>(bounds_);
    } else {
      slot = std::make_unique<Series>();
    }
  }
  return *slot;
}

template class MetricFamily<MetricCounter>;
template class MetricFamily<MetricGauge>;
template class MetricFamily<MetricHistogram>;

MetricsRegistry::Entry& MetricsRegistry::Register(MetricType type, std::string name,
                                                  std::string help,
                                                  std::vector<std::string> labels) {
  if (!ValidName(name, true)) throw std::logic_error("invalid metric name '" + name + "'");
  for (const std::string& label : labels) {
    if (!ValidName(label, false) || label.rfind("__", 0) == 0 || label == "le") {
      throw std::logic_error("invalid label name '" + label + "' of metric " + name);
    }
  }
  for (auto& entry : entries_) {
    if (entry->name != name) continue;
    if (entry->type != type || entry->labels != labels || entry->callback) {
      throw std::logic_error("metric " + name + " is already registered differently");
    }
    return *entry;
  }
  auto entry = std::make_unique<Entry>();
  entry->type = type;
  entry->name = std::move(name);
  entry->help = std::move(help);
  entry->labels = std::move(labels);
  entries_.push_back(std::move(entry));
  return *entries_.back();
}

CounterFamily& MetricsRegistry::Counter(std::string name, std::string help,
                                        std::vector<std::string> labels) {
  std::lock_guard lock(mutex_);
  Entry& e = Register(MetricType::kCounter, std::move(name), std::move(help), std::move(labels));
  if (!e.counter) e.counter.reset(new CounterFamily(e.name, e.help, e.labels, {}));
  return *e.counter;
}

GaugeFamily& MetricsRegistry::Gauge(std::string name, std::string help,
                                    std::vector<std::string> labels) {
  std::lock_guard lock(mutex_);
  Entry& e = Register(MetricType::kGauge, std::move(name), std::move(help), std::move(labels));
  if (!e.gauge) e.gauge.reset(new GaugeFamily(e.name, e.help, e.labels, {}));
  return *e.gauge;
}

HistogramFamily& MetricsRegistry::Histogram(std::string name, std::string help,
                                            std::vector<double> bounds,
                                            std::vector<std::string> labels) {
  if (bounds.empty() || !std::is_sorted(bounds.begin(), bounds.end()) ||
      std::adjacent_find(bounds.begin(), bounds.end()) != bounds.end()) {
    throw std::logic_error("histogram " + name + " needs strictly ascending bucket bounds");
  }
  std::lock_guard lock(mutex_);
  Entry& e = Register(MetricType::kHistogram, std::move(name), std::move(help), std::move(labels));
  if (!e.histogram) {
    e.histogram.reset(new HistogramFamily(e.name, e.help, e.labels, std::move(bounds)));
  }
  return *e.histogram;
}

void MetricsRegistry::AddGaugeCallback(std::string name, std::string help,
                                       std::vector<std::string> labels, GaugeCallback callback) {
  AddCallback(MetricType::kGauge, std::move(name), std::move(help), std::move(labels),
              std::move(callback));
}

void MetricsRegistry::AddCounterCallback(std::string name, std::string help,
                                         std::vector<std::string> labels,
                                         GaugeCallback callback) {
  AddCallback(MetricType::kCounter, std::move(name), std::move(help), std::move(labels),
              std::move(callback));
}

void MetricsRegistry::AddCallback(MetricType type, std::string name, std::string help,
                                  std::vector<std::string> labels, GaugeCallback callback) {
  std::lock_guard lock(mutex_);
  for (const auto& entry : entries_) {
    if (entry->name == name) throw std::logic_error("metric " + name + " is already registered");
  }
  Entry& e = Register(type, std::move(name), std::move(help), std::move(labels));
  e.callback = std::move(callback);
}

void MetricsRegistry::RemoveCallback(const std::string& name) {
  std::lock_guard lock(mutex_);
  std::erase_if(entries_, [&](const auto& e) { return e->name == name && e->callback; });
}

std::string MetricsRegistry::WriteText() const {
  std::lock_guard lock(mutex_);
  std::string out;
  for (const auto& entry : entries_) {
    const Entry& e = *entry;
    if (e.callback) {
      Header(out, e.name, e.help, e.type == MetricType::kCounter ? "counter" : "gauge");
      for (const GaugeSample& sample : e.callback()) {
        if (sample.labels.size() != e.labels.size()) continue;  // a bug in the callback
        out += e.name + LabelText(e.labels, sample.labels) + ' ' +
               FormatSampleValue(sample.value) + '\n';
      }
    } else if (e.counter) {
      Header(out, e.name, e.help, "counter");
      std::lock_guard series_lock(e.counter->mutex_);
      for (const auto& [values, series] : e.counter->series_) {
        out += e.name + LabelText(e.labels, values) + ' ' +
               FormatSampleValue(static_cast<double>(series->value())) + '\n';
      }
    } else if (e.gauge) {
      Header(out, e.name, e.help, "gauge");
      std::lock_guard series_lock(e.gauge->mutex_);
      for (const auto& [values, series] : e.gauge->series_) {
        out += e.name + LabelText(e.labels, values) + ' ' + FormatSampleValue(series->value()) +
               '\n';
      }
    } else if (e.histogram) {
      Header(out, e.name, e.help, "histogram");
      const std::vector<double>& bounds = e.histogram->bounds_;
      std::lock_guard series_lock(e.histogram->mutex_);
      for (const auto& [values, series] : e.histogram->series_) {
        const MetricHistogram::Snapshot s = series->snapshot();
        for (std::size_t i = 0; i <= bounds.size(); ++i) {
          const std::string le =
              "le=\"" + (i < bounds.size() ? FormatSampleValue(bounds[i]) : "+Inf") + '"';
          out += e.name + "_bucket" + LabelText(e.labels, values, le) + ' ' +
                 FormatSampleValue(static_cast<double>(s.cumulative[i])) + '\n';
        }
        out += e.name + "_sum" + LabelText(e.labels, values) + ' ' + FormatSampleValue(s.sum) +
               '\n';
        out += e.name + "_count" + LabelText(e.labels, values) + ' ' +
               FormatSampleValue(static_cast<double>(s.count)) + '\n';
      }
    }
  }
  return out;
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string EscapeHelp(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatSampleValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    return std::to_string(static_cast<long long>(value));
  }
  char buffer[64];
  const double magnitude = std::fabs(value);
  const bool fixed = magnitude >= 1e-6 && magnitude < 1e15;
  auto [end, ec] = fixed ? std::to_chars(buffer, buffer + sizeof buffer, value,
                                         std::chars_format::fixed)
                         : std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, end);
}

std::vector<double> LatencyBuckets() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
          0.025,  0.05,    0.1,    0.25,  0.5,    1,     2.5, 5, 10};
}

}  // namespace reckon
