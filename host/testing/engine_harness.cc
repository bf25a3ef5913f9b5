#include "reckon/host/testing/engine_harness.h"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <stdexcept>

#include "reckon/storage/backend/open_backend.h"
#include "reckon/storage/testing/test_backend.h"
#include "reckon/host/testing/test_workflows.h"

namespace reckon::testing {

namespace asio = boost::asio;

namespace {

std::unique_ptr<storage::Journal> OpenJournal(const std::string& name) {
  auto opened = storage::OpenJournal(name);
  if (!opened) throw std::runtime_error("cannot open journal: " + opened.error().ToString());
  return std::move(opened).value();
}

}  // namespace

EngineHarness::EngineHarness(EngineOptions options)
    : options_(std::move(options)),
      journal_name_(storage::NewTestJournalOrThrow(dir_)),
      journal_(OpenJournal(journal_name_)),
      tools_(std::make_unique<ToolRegistry>()),
      workflows_(std::make_unique<WorkflowRegistry>()) {
  (void)RegisterTestWorkflows(*workflows_);
}

EngineHarness::~EngineHarness() { Shutdown(); }

WorkflowRegistry& EngineHarness::ReplaceWorkflows() {
  if (booted()) throw std::logic_error("ReplaceWorkflows() while an engine is booted");
  workflows_ = std::make_unique<WorkflowRegistry>();
  return *workflows_;
}

void EngineHarness::Boot() {
  if (booted()) throw std::logic_error("Boot() while an engine is booted");
  crashed_ = false;
  journal_.reset();  // the host's journal is the only one open while it lives
  EmbeddedHostOptions options;
  options.engine = options_;
  options.clock = clock_;
  host_ = std::make_unique<EmbeddedHost>(OpenJournal(journal_name_), *tools_, *workflows_,
                                         std::move(options));
  if (trace_ != nullptr) host_->AddSink(*trace_);
  host_->AddSink(poke_);
}

void EngineHarness::Shutdown() {
  if (!booted()) return;
  // The host destroys the engine, then whatever still runs on the io_context, then closes the
  // journal: a process that died between two instructions.
  host_.reset();
  journal_ = OpenJournal(journal_name_);
}

void EngineHarness::Crash() {
  crashed_ = true;
  if (host_) host_->io().stop();
}

void EngineHarness::Poke() {
  if (done_ != nullptr && host_ && (*done_)()) host_->io().stop();
}

bool EngineHarness::RunFor(std::chrono::milliseconds duration) {
  auto wait = [](boost::asio::steady_timer* timer) -> boost::asio::awaitable<bool> {
    co_await timer->async_wait(boost::asio::use_awaitable);
    co_return true;
  };
  boost::asio::steady_timer timer(io(), duration);
  return Await(wait(&timer), duration + std::chrono::seconds(5)).has_value();
}

bool EngineHarness::RunUntil(std::function<bool()> done, std::chrono::milliseconds timeout) {
  if (done()) return true;
  if (!booted() || crashed_) return false;
  const std::function<bool()>* outer = done_;
  done_ = &done;
  bool timed_out = false;
  asio::steady_timer watchdog(io(), timeout);
  watchdog.async_wait([this, &timed_out](const boost::system::error_code& ec) {
    if (ec) return;  // cancelled: the watchdog's RunUntil has returned
    timed_out = true;
    io().stop();
  });
  while (!crashed_ && !timed_out && !done()) {
    io().restart();
    io().run();
  }
  watchdog.cancel();
  done_ = outer;
  return done();
}

bool EngineHarness::RunUntilSettled(const std::string& workflow_id,
                                    std::chrono::milliseconds timeout) {
  return RunUntil(
      [this, workflow_id] {
        std::optional<RunSummary> run = Describe(workflow_id);
        if (!run) return false;
        if (storage::IsTerminal(run->status) || !run->stuck_reason.empty()) return true;
        bool waits_for_person = false;
        for (const OperationRecord& op : run->operations) {
          if (op.state == OperationState::kAwaitingApproval ||
              op.state == OperationState::kNeedsHuman) {
            waits_for_person = true;
          } else if (!IsTerminal(op.state)) {
            return false;
          }
        }
        return waits_for_person;
      },
      timeout);
}

bool EngineHarness::RunUntilState(const std::string& workflow_id, const std::string& step_id,
                                  OperationState state, std::chrono::milliseconds timeout) {
  return RunUntil(
      [this, workflow_id, step_id, state] {
        std::optional<OperationRecord> op = Operation(workflow_id, step_id);
        return op && op->state == state;
      },
      timeout);
}

Result<storage::RunRef> EngineHarness::Start(const std::string& workflow_id,
                                             const std::string& type, boost::json::value input) {
  auto started = Await(engine().Start(workflow_id, type, std::move(input)));
  if (!started) return Err(Errc::kDeadlineExceeded, "Start() did not complete");
  return std::move(*started);
}

Result<int> EngineHarness::Recover() {
  auto recovered = Await(engine().Recover());
  if (!recovered) return Err(Errc::kDeadlineExceeded, "Recover() did not complete");
  return std::move(*recovered);
}

Result<void> EngineHarness::Decide(const std::string& workflow_id, ApprovalDecision decision) {
  auto decided = Await(engine().DecideApproval(workflow_id, std::move(decision)));
  if (!decided) return Err(Errc::kDeadlineExceeded, "DecideApproval() did not complete");
  return std::move(*decided);
}

Result<void> EngineHarness::Resolve(const std::string& workflow_id,
                                    HumanResolution resolution) {
  auto resolved = Await(engine().Resolve(workflow_id, std::move(resolution)));
  if (!resolved) return Err(Errc::kDeadlineExceeded, "Resolve() did not complete");
  return std::move(*resolved);
}

std::optional<RunSummary> EngineHarness::Describe(const std::string& workflow_id) const {
  if (!host_) return std::nullopt;
  return host_->engine().Describe(workflow_id);
}

std::optional<OperationRecord> EngineHarness::Operation(const std::string& workflow_id,
                                                      const std::string& step_id) const {
  std::optional<RunSummary> run = Describe(workflow_id);
  if (!run) return std::nullopt;
  for (OperationRecord& op : run->operations) {
    if (op.step_id == step_id) return std::move(op);
  }
  return std::nullopt;
}

storage::Journal& EngineHarness::journal() {
  if (booted()) throw std::logic_error("read the journal only while no engine is booted");
  return *journal_;
}

std::vector<storage::Event> EngineHarness::Events(const std::string& workflow_id) {
  auto run = journal().FindLatestRun(workflow_id);
  if (!run) throw std::runtime_error(run.error().ToString());
  if (!run.value()) return {};
  auto events = journal().ReadEvents(run.value()->ref);
  if (!events) throw std::runtime_error(events.error().ToString());
  return std::move(events).value();
}

}  // namespace reckon::testing
