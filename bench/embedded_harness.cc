#include "bench/embedded_harness.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "bench/long_workflows.h"
#include "bench/ten_calls.h"

namespace reckon::bench {
namespace {

std::unique_ptr<EmbeddedHost> OpenHost(const std::string& path, Sync sync) {
  storage::SqliteJournalOptions options;
  options.sync = sync;
  auto journal = storage::OpenSqliteJournal(path, options);
  if (!journal) {
    std::fprintf(stderr, "long_bench: cannot open the journal %s: %s\n", path.c_str(),
                 journal.error().ToString().c_str());
    std::exit(1);
  }
  EmbeddedHostOptions host_options;
  host_options.engine.history.max_events = kBenchHistoryMaxEvents;
  return std::make_unique<EmbeddedHost>(std::move(journal).value(), std::move(host_options));
}

void Check(Result<void> registered, const char* what) {
  if (!registered) {
    std::fprintf(stderr, "long_bench: cannot register %s: %s\n", what,
                 registered.error().ToString().c_str());
    std::exit(1);
  }
}

}  // namespace

Harness::Harness(const std::string& path, Sync sync)
    : host(OpenHost(path, sync)),
      io(host->io()),
      engine(host->engine()),
      journal(host->journal()),
      workflows(host->workflows()) {
  Check(host->tools().Register(Tool{NoopContract(), Noop, {}}), "noop");
  Check(host->tools().Register(Tool{ReadOnlyContract("model"), Model, {}}), "model");
  Check(host->tools().Register(Tool{ReadOnlyContract("search"), Lookup, {}}), "search");
  Check(host->tools().Register(Tool{ReadOnlyContract("fetch"), Lookup, {}}), "fetch");
  Check(workflows.Register("ten_calls", TenCalls), "ten_calls");
  Check(workflows.Register("fan_out", FanOut), "fan_out");
  Check(workflows.Register("agent_loop", AgentLoop), "agent_loop");
  host->AddSink(*this);
}

Harness::~Harness() { host->RemoveSink(*this); }

std::shared_ptr<boost::asio::steady_timer> Harness::Expect(const std::string& id, int committed) {
  auto timer = std::make_shared<boost::asio::steady_timer>(io);
  timer->expires_at(boost::asio::steady_timer::time_point::max());
  waiters_[id] = Waiter{timer.get(), committed};
  return timer;
}

void Harness::OnCommitted(const RunState& run, std::span<const storage::Event> events) {
  events_committed_ += static_cast<std::int64_t>(events.size());
  const std::string& id = run.ref().workflow_id;
  committed_now_[id] = run.committed_operations();
  auto it = waiters_.find(id);
  if (it == waiters_.end()) return;
  if (run.terminal() || run.committed_operations() > it->second.committed_before) {
    it->second.timer->cancel();
  }
}

void RemoveJournal(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

}  // namespace reckon::bench
