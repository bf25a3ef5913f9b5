// The metrics registry's text exposition format (Prometheus 0.0.4): HELP and TYPE lines,
// label escaping, histogram buckets (cumulative, le, +Inf), _sum and _count, callback gauges
// and counters; and the metrics sink's counts from a run's events.
#include "reckon/telemetry/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "reckon/telemetry/metrics_sink.h"

namespace reckon {
namespace {

TEST(MetricsText, CounterWithLabelsAndHelp) {
  MetricsRegistry registry;
  auto& family = registry.Counter("reckon_things_total", "Things done.\nSecond line \\ here.",
                                  {"tool", "kind"});
  family.With({"charge", "AttemptStarted"}).Inc();
  family.With({"charge", "AttemptStarted"}).Inc(2);
  family.With({"refund", "OperationCommitted"}).Inc();
  EXPECT_EQ(registry.WriteText(),
            "# HELP reckon_things_total Things done.\\nSecond line \\\\ here.\n"
            "# TYPE reckon_things_total counter\n"
            "reckon_things_total{tool=\"charge\",kind=\"AttemptStarted\"} 3\n"
            "reckon_things_total{tool=\"refund\",kind=\"OperationCommitted\"} 1\n");
}

TEST(MetricsText, LabelValuesAreEscaped) {
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  MetricsRegistry registry;
  registry.Gauge("g", "A gauge.", {"reason"}).With({"say \"no\"\n"}).Set(-1.5);
  EXPECT_EQ(registry.WriteText(),
            "# HELP g A gauge.\n# TYPE g gauge\ng{reason=\"say \\\"no\\\"\\n\"} -1.5\n");
}

TEST(MetricsText, SampleValues) {
  EXPECT_EQ(FormatSampleValue(0), "0");
  EXPECT_EQ(FormatSampleValue(42), "42");
  EXPECT_EQ(FormatSampleValue(0.25), "0.25");
  EXPECT_EQ(FormatSampleValue(0.0001), "0.0001");
  EXPECT_EQ(FormatSampleValue(1e20), "1e+20");
  EXPECT_EQ(FormatSampleValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatSampleValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatSampleValue(std::nan("")), "NaN");
}

TEST(MetricsText, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  MetricsRegistry registry;
  auto& h = registry.Histogram("lat_seconds", "Latency.", {0.5, 1, 10}).Get();
  h.Observe(0.25);
  h.Observe(0.5);  // on a bound: counted in that bucket (le is "less or equal")
  h.Observe(5);
  h.Observe(50);
  EXPECT_EQ(registry.WriteText(),
            "# HELP lat_seconds Latency.\n# TYPE lat_seconds histogram\n"
            "lat_seconds_bucket{le=\"0.5\"} 2\n"
            "lat_seconds_bucket{le=\"1\"} 2\n"
            "lat_seconds_bucket{le=\"10\"} 3\n"
            "lat_seconds_bucket{le=\"+Inf\"} 4\n"
            "lat_seconds_sum 55.75\n"
            "lat_seconds_count 4\n");
}

TEST(MetricsText, HistogramWithLabelsPutsLeLast) {
  MetricsRegistry registry;
  registry.Histogram("size", "Size.", {1}, {"queue"}).With({"q"}).Observe(1);
  const std::string text = registry.WriteText();
  EXPECT_NE(text.find("size_bucket{queue=\"q\",le=\"1\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("size_bucket{queue=\"q\",le=\"+Inf\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("size_count{queue=\"q\"} 1\n"), std::string::npos) << text;
}

TEST(MetricsText, CallbacksAreEvaluatedAtEachWriteAndCanBeRemoved) {
  MetricsRegistry registry;
  int depth = 3;
  registry.AddGaugeCallback("depth", "Depth.", {"queue"}, [&depth] {
    return std::vector<GaugeSample>{{{"a"}, static_cast<double>(depth)}};
  });
  registry.AddCounterCallback("drops_total", "Drops.", {}, [] {
    return std::vector<GaugeSample>{{{}, 7}};
  });
  EXPECT_EQ(registry.WriteText(),
            "# HELP depth Depth.\n# TYPE depth gauge\ndepth{queue=\"a\"} 3\n"
            "# HELP drops_total Drops.\n# TYPE drops_total counter\ndrops_total 7\n");
  depth = 4;
  EXPECT_NE(registry.WriteText().find("depth{queue=\"a\"} 4\n"), std::string::npos);
  registry.RemoveCallback("depth");
  EXPECT_EQ(registry.WriteText().find("depth{"), std::string::npos);
}

TEST(MetricsText, RegisteringTheSameNameAgainReturnsTheFamilyOrRefusesAConflict) {
  MetricsRegistry registry;
  auto& a = registry.Counter("c_total", "C.", {"x"});
  auto& b = registry.Counter("c_total", "C.", {"x"});
  EXPECT_EQ(&a, &b);
  EXPECT_THROW(registry.Gauge("c_total", "C.", {"x"}), std::logic_error);
  EXPECT_THROW(registry.Counter("c_total", "C.", {"y"}), std::logic_error);
  EXPECT_THROW(registry.Counter("bad name", "C."), std::logic_error);
  EXPECT_THROW(registry.Counter("ok_total", "C.", {"le"}), std::logic_error);
  EXPECT_THROW(a.With({}), std::logic_error);
}

// A run's events, folded into its RunState as the engine would, then reported to the sink.
class MetricsSinkTest : public ::testing::Test {
 protected:
  void Commit(std::vector<storage::EventBody> bodies) {
    std::vector<storage::Event> events;
    for (auto& body : bodies) {
      storage::Event event;
      event.seq = run_.next_seq();
      event.body = std::move(body);
      ASSERT_TRUE(run_.Apply(event)) << storage::EventTypeName(event.body);
      events.push_back(std::move(event));
    }
    sink_.OnCommitted(run_, events);
  }

  MetricsRegistry registry_;
  MetricsSink sink_{registry_};
  RunState run_{storage::RunRef{"wf-1", "run-1"}};
};

TEST_F(MetricsSinkTest, CountsTransitionsByToolAndTracksOperationStates) {
  storage::OperationPrepared prepared;
  prepared.step_id = "s1";
  prepared.operation_id = "op-1";
  prepared.tool = "charge";
  Commit({storage::WorkflowStarted{"pay", "{}", "", ""}, prepared,
          storage::AttemptStarted{"op-1", 1, "w", 0, ""}});
  EXPECT_EQ(sink_.operations_in(OperationState::kInFlight), 1);
  Commit({storage::OutcomeUnknown{"op-1", 1, "deadline_exceeded", 0},
          storage::ReconciliationStarted{"op-1", 1}});
  Commit({storage::ReconciliationResult{"op-1", 1, storage::ReconcileVerdict::kStillUnknown, "",
                                        0},
          storage::NeedsHuman{"op-1", "lookups exhausted"}});
  EXPECT_EQ(sink_.operations_in(OperationState::kInFlight), 0);
  EXPECT_EQ(sink_.operations_in(OperationState::kNeedsHuman), 1);
  const std::string text = registry_.WriteText();
  EXPECT_NE(text.find("reckon_operation_transitions_total{tool=\"charge\",kind=\"AttemptStarted\"} 1"),
            std::string::npos) << text;
  EXPECT_NE(text.find("reckon_outcome_unknown_total{tool=\"charge\",reason=\"deadline_exceeded\"} 1"),
            std::string::npos) << text;
  EXPECT_NE(text.find("reckon_reconciliations_total{tool=\"charge\",result=\"still_unknown\"} 1"),
            std::string::npos) << text;
  EXPECT_NE(text.find("reckon_needs_person 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("reckon_operations{state=\"needs_human\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("reckon_runs_started_total{workflow_type=\"pay\"} 1\n"), std::string::npos)
      << text;

  Commit({storage::HumanResolved{"op-1", true, "ref-1", "ann", ""},
          storage::OperationCommitted{"op-1", 1, "{}", "ref-1", storage::CommitSource::kHuman},
          storage::WorkflowCompleted{"{}"}});
  EXPECT_EQ(sink_.operations_in(OperationState::kNeedsHuman), 0);
  EXPECT_EQ(sink_.operations_in(OperationState::kCommitted), 0);  // the run finished
  EXPECT_NE(registry_.WriteText().find(
                "reckon_runs_finished_total{workflow_type=\"pay\",status=\"completed\"} 1\n"),
            std::string::npos);
}

TEST_F(MetricsSinkTest, CommitObserverFillsTheHistograms) {
  sink_.ObserveCommit(3, std::chrono::microseconds(1500));
  const std::string text = registry_.WriteText();
  EXPECT_NE(text.find("reckon_commit_group_size_bucket{le=\"4\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("reckon_commit_group_size_sum 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("reckon_commit_seconds_bucket{le=\"0.0025\"} 1\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("reckon_commit_seconds_count 1\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace reckon
