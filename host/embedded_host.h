// EmbeddedHost: the composition root of embedded mode. One object owns, in this order, the
// journal, the registries (unless borrowed), the io_context, the local worker and the engine,
// and destroys them in reverse. A program registers its tools and workflows, recovers, starts
// work, and awaits UntilIdle() instead of polling:
//
//   auto host = EmbeddedHost::Open("agent.db");            // refused if another process owns it
//   host->tools().Register(...); host->workflows().Register(...);
//   int code = host->Run([&]() -> awaitable<int> {
//     co_await host->Recover(); co_await host->engine().Start(...);
//     co_await host->UntilIdle(); co_return 0; });
//
// Concurrency: everything runs on the host's io_context, on the thread that calls Run() (or
// runs io()). Commits are inline on that thread (docs/ARCHITECTURE.md, decision 4), so between
// two engine batches the journal is free for reads through journal().
//
// Failure: if a commit fails the engine stops (engine/engine.h); Run() then ends with
// Errc::kUnavailable, and the process should exit non-zero: a restart recovers from the journal.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <exception>
#include <memory>
#include <optional>
#include <string>

#include "reckon/base/error.h"
#include "reckon/engine/clock.h"
#include "reckon/engine/engine.h"
#include "reckon/storage/journal.h"
#include "reckon/storage/payload_codec.h"
#include "reckon/telemetry/metrics.h"
#include "reckon/telemetry/metrics_listener.h"
#include "reckon/telemetry/metrics_sink.h"
#include "reckon/host/outbox_dispatch.h"
#include "reckon/host/outbox_metrics.h"
#include "reckon/host/local_worker.h"
#include "reckon/worker/tool.h"
#include "reckon/worker/workflow_registry.h"

namespace reckon {

class OtlpTraceSink;

// What EmbeddedHost::Run returns for a `main` of type awaitable<T>: Result<T>, or T itself when
// T is already a Result.
template <class T>
struct RunResult {
  using type = Result<T>;
};
template <class U>
struct RunResult<Result<U>> {
  using type = Result<U>;
};

struct EmbeddedHostOptions {
  EngineOptions engine;
  Clock* clock = nullptr;  // not owned; null: the system clock
  // Open() only: a payload key file (storage/crypto/payload_keys.h). Non-empty: the journal
  // seals every payload it writes and opens those it reads with these keys (docs/SECURITY.md,
  // "Payloads at rest"); the host owns the codec. A journal handed to a constructor was opened
  // by its caller, with its own SqliteJournalOptions::payload_codec.
  std::string payload_key_file;
  // "HOST:PORT" (port 0: any free): keep Prometheus metrics (docs/OPERATIONS.md) and serve
  // them at GET /metrics on this address, unauthenticated (telemetry/metrics_listener.h;
  // docs/SECURITY.md, "Metrics"). Bound by Recover(). Empty: no metrics.
  std::string metrics_listen;
  // Open() only: an OTLP/HTTP collector ("http://127.0.0.1:4318"). Non-empty: the host exports
  // the effect lifecycle as OpenTelemetry spans to <endpoint>/v1/traces from a thread of its
  // own, never slowing the engine (telemetry/otlp_trace_sink.h; docs/OPERATIONS.md, "OTLP
  // traces"). A bad URL fails Open().
  std::string otlp_endpoint;
  // Open() only: a NATS server (nats://host:port) with JetStream. Non-empty: the host runs the
  // outbox dispatcher (host/outbox_dispatch.h), which delivers what workflows publish
  // (WorkflowContext::Publish) on a thread of its own; empty: messages wait in the outbox.
  std::string nats_url;
};

class EmbeddedHost {
 public:
  // Opens (or creates) the journal `journal_path` names as its owner and builds the host: a
  // SQLite file, or a PostgreSQL database by a postgresql:// connection string
  // (storage/backend/open_backend.h). With options.payload_key_file, errors of the key file
  // too (naming it).
  static Result<std::unique_ptr<EmbeddedHost>> Open(const std::string& journal_path,
                                                    EmbeddedHostOptions options = {});

  // A host over a journal already open (a test's fault-injecting journal, another backend).
  explicit EmbeddedHost(std::unique_ptr<storage::Journal> journal,
                        EmbeddedHostOptions options = {});
  // The same with registries it borrows: they must outlive the host. For a test that boots
  // several process lives with the same code.
  EmbeddedHost(std::unique_ptr<storage::Journal> journal, ToolRegistry& tools,
               WorkflowRegistry& workflows, EmbeddedHostOptions options = {});
  ~EmbeddedHost();
  EmbeddedHost(const EmbeddedHost&) = delete;
  EmbeddedHost& operator=(const EmbeddedHost&) = delete;

  // Register before Recover(); the worker reads them for as long as it lives.
  ToolRegistry& tools() { return tools_; }
  WorkflowRegistry& workflows() { return workflows_; }
  // Adds a trace sink (not owned: it must outlive the host, or be removed first).
  void AddSink(TraceSink& sink) { engine_->AddSink(sink); }
  void RemoveSink(TraceSink& sink) { engine_->RemoveSink(sink); }

  // The OTLP exporter (EmbeddedHostOptions::otlp_endpoint), for its drop count; null without.
  const OtlpTraceSink* otlp() const { return otlp_.get(); }

  boost::asio::io_context& io() { return *io_; }
  Engine& engine() { return *engine_; }
  // Reads on the host's thread, between engine batches (commits are inline).
  storage::Journal& journal() { return *journal_; }

  // Engine::Recover: resumes every run the journal holds. Once, before anything else.
  // With EmbeddedHostOptions::metrics_listen, first seeds the metrics from the journal and
  // binds the metrics address (its errors name the address).
  boost::asio::awaitable<Result<int>> Recover();
  // The metrics registry (to add an application's own metrics or callbacks), or null without
  // metrics_listen; and the bound metrics port (0 before Recover()).
  MetricsRegistry* metrics() { return metrics_.get(); }
  std::uint16_t metrics_port() const { return metrics_listener_ ? metrics_listener_->port() : 0; }
  // Engine::UntilIdle: every run finished, stopped, or waiting on a signal, an approval or a
  // person, all of it durable.
  boost::asio::awaitable<Result<void>> UntilIdle() { return engine_->UntilIdle(); }
  // Engine::UntilSettled: run `workflow_id` finished, stopped, or waits on something outside
  // the engine; its summary's `wait` says which (engine/run_wait.h). A host that ends when its
  // run settles should exit non-zero unless the wait is what it expects (kNothing with the run
  // completed, or a wait it means to leave for later): kStopped is a run stuck until the code
  // is fixed.
  boost::asio::awaitable<Result<RunSummary>> UntilSettled(std::string workflow_id) {
    return engine_->UntilSettled(std::move(workflow_id));
  }
  // Grants every approval that waits in `workflow_id` (every run in the first form) for its
  // current intent hash, as `decided_by` (a principal name, base/identifier.h: "ops-bot", not
  // "ops bot"); returns how many it granted. What a person does from the CLI. Two overloads,
  // no default argument (GCC 12, see engine/engine.h).
  boost::asio::awaitable<Result<int>> ApprovePending(std::string decided_by);
  boost::asio::awaitable<Result<int>> ApprovePending(std::string decided_by,
                                                     std::string workflow_id);
  // Until idle; with `approve_as` set, grants each approval as it comes (ApprovePending) and
  // goes on until only a person (a needs_human operation) can let the runs continue.
  boost::asio::awaitable<Result<void>> Settle(std::optional<std::string> approve_as);

  // Runs `main` on the io_context, on this thread, until it completes, and returns its value
  // (a `Result<U>` that `main` returns is passed on as it is, not wrapped again). If the engine
  // fails first: Errc::kUnavailable naming the failure. An exception from `main` is a bug and
  // is rethrown.
  template <class T>
  typename RunResult<T>::type Run(boost::asio::awaitable<T> main);

 private:
  void Build(EmbeddedHostOptions options);
  // co_spawn needs a default-constructible result; T need not be.
  template <class T>
  static boost::asio::awaitable<void> Capture(boost::asio::awaitable<T> main,
                                              std::optional<T>* out) {
    out->emplace(co_await std::move(main));
  }

  std::unique_ptr<storage::PayloadCodec> payload_codec_;  // Open() with keys; outlives journal_
  std::unique_ptr<storage::Journal> journal_;
  std::unique_ptr<ToolRegistry> owned_tools_;          // null when borrowed
  std::unique_ptr<WorkflowRegistry> owned_workflows_;  // null when borrowed
  ToolRegistry& tools_;
  WorkflowRegistry& workflows_;
  SystemClock system_clock_;
  std::unique_ptr<OtlpTraceSink> otlp_;  // outlives the engine, which reports to it
  std::unique_ptr<boost::asio::io_context> io_;
  std::unique_ptr<LocalWorker> worker_;
  // Metrics (metrics_listen): the registry and sink outlive the engine, whose commit observer
  // reports to the sink; the listener goes first.
  std::unique_ptr<MetricsRegistry> metrics_;
  std::unique_ptr<MetricsSink> metrics_sink_;
  std::string metrics_listen_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<MetricsListener> metrics_listener_;
  std::unique_ptr<OutboxDispatch> outbox_;  // Open() with nats_url; a sink of engine_
  std::unique_ptr<OutboxMetrics> outbox_metrics_;  // Open() with metrics_listen
  std::optional<Error> failure_;  // set when the engine failed during Run()
};

template <class T>
typename RunResult<T>::type EmbeddedHost::Run(boost::asio::awaitable<T> main) {
  std::optional<T> value;
  std::exception_ptr thrown;
  failure_.reset();
  auto finish = [this, &thrown](std::exception_ptr e) {
    thrown = e;
    io_->stop();
  };
  boost::asio::co_spawn(*io_, Capture(std::move(main), &value), std::move(finish));
  io_->restart();
  io_->run();
  if (thrown) std::rethrow_exception(thrown);
  if (failure_) return *failure_;
  if (!value) return Err(Errc::kInternal, "the host's io_context stopped before main completed");
  return typename RunResult<T>::type(std::move(*value));
}

}  // namespace reckon
