#include "reckon/testkit/test_env.h"

#include <stdexcept>

#include "reckon/storage/backend/open_backend.h"

namespace reckon::testkit {

namespace asio = boost::asio;

TestEnv::TestEnv(TestEnvOptions options) : options_(std::move(options)) {}

TestEnv::~TestEnv() { host_.reset(); }

Result<int> TestEnv::Boot() {
  crash_requested_ = false;
  RECKON_TRY(auto journal, storage::OpenJournal(journal_.path()));
  EmbeddedHostOptions options;
  options.engine = options_.engine;
  options.clock = &clock_;
  host_ = std::make_unique<EmbeddedHost>(std::move(journal), tools_, workflows_,
                                         std::move(options));
  return Await(host_->Recover());
}

EmbeddedHost& TestEnv::host() {
  if (!host_) {
    Result<int> booted = Boot();
    if (!booted) {
      throw std::runtime_error("TestEnv: cannot boot an engine over " + journal_.path() + ": " +
                               booted.error().ToString());
    }
  }
  return *host_;
}

Result<void> TestEnv::Drive(const std::function<bool()>& done) {
  asio::io_context& io = host_->io();
  const auto give_up = std::chrono::steady_clock::now() + options_.real_time_limit;
  for (;;) {
    if (crash_requested_) {
      return Err(Errc::kUnavailable,
                 "this life of the engine crashed (RequestCrash); call CrashAndRestart()");
    }
    if (host_->engine().failed()) {
      return Err(Errc::kUnavailable,
                 "the engine stopped after a failed commit; call CrashAndRestart() to recover");
    }
    if (done()) return Ok();
    io.restart();
    if (io.poll() > 0) continue;
    if (done()) return Ok();
    if (options_.auto_skip && clock_.AdvanceToNextDue()) continue;
    // Nothing is ready and no timer lies ahead: wait for real work (a tool's own I/O).
    const auto now = std::chrono::steady_clock::now();
    if (now >= give_up) {
      return Err(Errc::kDeadlineExceeded,
                 "the engine did not get there within " +
                     std::to_string(options_.real_time_limit.count()) +
                     " ms of real time (TestEnvOptions::real_time_limit); a tool may wait on "
                     "something that never answers");
    }
    io.restart();
    if (io.run_one_for(give_up - now) == 0 && io.stopped() && !crash_requested_) {
      return Err(Errc::kDeadlineExceeded,
                 std::string("the engine has nothing left to do, and what was awaited did not "
                             "happen") +
                     (options_.auto_skip ? "" : "; with auto_skip off, move the clock with Skip()"));
    }
  }
}

Result<storage::RunRef> TestEnv::Start(const std::string& workflow_id, const std::string& type,
                                       boost::json::value input) {
  return Await(engine().Start(workflow_id, type, std::move(input)));
}

Result<void> TestEnv::Signal(const std::string& workflow_id, const std::string& name,
                             const std::string& payload_json) {
  return Await(engine().Signal(workflow_id, name, payload_json));
}

Result<void> TestEnv::Cancel(const std::string& workflow_id, const std::string& reason) {
  return Await(engine().Cancel(workflow_id, reason));
}

Result<int> TestEnv::ApprovePending(const std::string& workflow_id,
                                    const std::string& decided_by) {
  return Await(host().ApprovePending(decided_by, workflow_id));
}

Result<void> TestEnv::Decide(const std::string& workflow_id, ApprovalDecision decision) {
  return Await(engine().DecideApproval(workflow_id, std::move(decision)));
}

Result<void> TestEnv::Resolve(const std::string& workflow_id, HumanResolution resolution) {
  return Await(engine().Resolve(workflow_id, std::move(resolution)));
}

Result<RunSummary> TestEnv::RunUntilSettled(const std::string& workflow_id) {
  return Await(engine().UntilSettled(workflow_id));
}

Result<void> TestEnv::RunUntilIdle() { return Await(engine().UntilIdle()); }

Result<void> TestEnv::RunUntil(std::function<bool()> done) {
  host();
  return Drive(done);
}

Result<void> TestEnv::Skip(std::chrono::microseconds step) {
  asio::io_context& io = host().io();
  clock_.Advance(step);
  if (options_.auto_skip) return RunUntilIdle();
  // What came due runs, and what it leads to without waiting; later timers wait for the clock.
  do {
    io.restart();
  } while (io.poll() > 0 && !crash_requested_);
  if (crash_requested_) {
    return Err(Errc::kUnavailable,
               "this life of the engine crashed (RequestCrash); call CrashAndRestart()");
  }
  return Ok();
}

Result<int> TestEnv::CrashAndRestart() {
  // The engine, the worker and every coroutine on the loop die where they stand, then the
  // journal closes: what a kill does, less the files (the journal's commits were durable).
  host_.reset();
  return Boot();
}

void TestEnv::RequestCrash() {
  crash_requested_ = true;
  if (host_) host_->io().stop();
}

Result<RunSummary> TestEnv::Describe(const std::string& workflow_id) {
  if (std::optional<RunSummary> run = engine().Describe(workflow_id)) return std::move(*run);
  // Not held by the engine: finished (read from the journal) or unknown (kNotFound).
  return Await(engine().UntilSettled(workflow_id));
}

Result<RunHistory> TestEnv::History(const std::string& workflow_id) {
  storage::Journal& journal = host().journal();
  RECKON_TRY(auto row, journal.FindLatestRun(workflow_id));
  if (!row) {
    return Err(Errc::kNotFound, "no run of workflow '" + workflow_id + "' in the journal");
  }
  RECKON_TRY(auto events, journal.ReadEvents(row->ref));
  return RunHistory{row->ref, std::move(events)};
}

}  // namespace reckon::testkit
