#include "reckon/host/plan_runner.h"

#include "reckon/worker/plan_workflow.h"

namespace reckon {

namespace {

// Hands each durable event of one run to PlanProgress, in order, exactly once: events from the
// journal first (an earlier life), then each committed batch as the engine reports it.
class ProgressSink final : public TraceSink {
 public:
  ProgressSink(std::string workflow_id, PlanProgress& progress,
               std::function<void(const std::string&)> on_line)
      : workflow_id_(std::move(workflow_id)), progress_(progress), on_line_(std::move(on_line)) {}

  void OnCommitted(const RunState& run, std::span<const storage::Event> events) override {
    if (run.ref().workflow_id != workflow_id_) return;
    for (const storage::Event& event : events) Show(event);
  }
  void Show(const storage::Event& event) {
    if (event.seq <= shown_) return;
    shown_ = event.seq;
    auto line = progress_.Line(event);
    if (line && on_line_) on_line_(*line);
  }

 private:
  std::string workflow_id_;
  PlanProgress& progress_;
  std::function<void(const std::string&)> on_line_;
  std::int64_t shown_ = 0;
};

// Catches up on what the journal holds of the plan's run (an earlier life's events).
Result<void> ShowJournal(storage::Journal& journal, const std::string& plan_id,
                         ProgressSink& sink) {
  RECKON_TRY(auto run, journal.FindLatestRun(plan_id));
  if (!run) return Ok();
  RECKON_TRY(auto events, journal.ReadEvents(run->ref));
  for (const storage::Event& event : events) sink.Show(event);
  return Ok();
}

// Step id -> state name: from the engine while it holds the run, else from the journal.
Result<std::map<std::string, std::string>> StepStates(EmbeddedHost& host,
                                                     const std::string& plan_id) {
  std::map<std::string, std::string> states;
  if (auto run = host.engine().Describe(plan_id)) {
    for (const OperationRecord& op : run->operations) {
      states[op.step_id] = std::string(OperationStateName(op.state));
    }
    return states;
  }
  RECKON_TRY(auto row, host.journal().FindLatestRun(plan_id));
  if (!row) return states;
  RECKON_TRY(auto ops, host.journal().ListOperations(row->run_pk));
  for (const auto& op : ops) states[op.step_id] = op.state;
  return states;
}

}  // namespace

boost::asio::awaitable<Result<PlanRunReport>> RunPlan(EmbeddedHost& host, const Plan& plan,
                                                      PlanRunOptions options) {
  RECKON_CO_TRY(ValidatePlan(plan, host.tools().contracts()));
  PlanRunReport report{PlanProgress(plan.plan_id), {}};
  ProgressSink sink(plan.plan_id, report.progress, std::move(options.on_line));
  // Events committed before this call (a run resumed by Recover(), or one that finished in an
  // earlier life) are read from the journal once; later ones arrive through the sink. Between
  // batches the journal is free to read (inline commit).
  RECKON_CO_TRY(ShowJournal(host.journal(), plan.plan_id, sink));
  host.AddSink(sink);
  struct Unsubscribe {
    EmbeddedHost& host;
    ProgressSink& sink;
    ~Unsubscribe() { host.RemoveSink(sink); }
  } unsubscribe{host, sink};
  auto start = host.engine().Start(plan.plan_id, kPlanWorkflow, PlanToJson(plan), PlanHash(plan));
  auto started = co_await std::move(start);
  if (!started && started.error().code() == Errc::kAlreadyExists) {
    co_return Err(Errc::kAlreadyExists,
                  "plan id '" + plan.plan_id + "' was already run with a different plan (this "
                  "one hashes to " + PlanHash(plan) + "); give the new plan a new plan_id");
  }
  if (!started) co_return started.error();
  RECKON_CO_TRY(co_await host.Settle(options.approve_as));
  RECKON_CO_TRY(report.states, StepStates(host, plan.plan_id));
  co_return report;
}

}  // namespace reckon
