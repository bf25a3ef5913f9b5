#include "reckon/host/embedded_host.h"

#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include "reckon/storage/crypto/aes_gcm_codec.h"
#include "reckon/storage/backend/open_backend.h"
#include "reckon/telemetry/otlp_trace_sink.h"

namespace reckon {

namespace asio = boost::asio;

Result<std::unique_ptr<EmbeddedHost>> EmbeddedHost::Open(const std::string& journal_path,
                                                         EmbeddedHostOptions options) {
  std::unique_ptr<storage::PayloadCodec> codec;
  if (!options.payload_key_file.empty()) {
    RECKON_TRY(auto opened, storage::OpenPayloadKeyFile(options.payload_key_file));
    codec = std::move(opened);
  }
  storage::OpenJournalOptions journal_options;
  journal_options.payload_codec = codec.get();
  std::unique_ptr<OtlpTraceSink> otlp;
  if (!options.otlp_endpoint.empty()) {
    OtlpExporterOptions otlp_options;
    otlp_options.endpoint = options.otlp_endpoint;
    otlp_options.resource.service_name = "reckon-embedded";
    RECKON_TRY(otlp, OtlpTraceSink::Start(std::move(otlp_options)));
  }
  RECKON_TRY(auto journal, storage::OpenJournal(journal_path, journal_options));
  if (const std::string warning = journal->integrity_warning(); !warning.empty()) {
    spdlog::warn("{}", warning);
  }
  const std::string nats_url = options.nats_url;
  Clock* clock = options.clock;
  auto host = std::make_unique<EmbeddedHost>(std::move(journal), std::move(options));
  host->payload_codec_ = std::move(codec);
  if (otlp) {
    host->otlp_ = std::move(otlp);
    host->engine_->AddSink(*host->otlp_);
  }
  if (!nats_url.empty()) {
    RECKON_TRY(host->outbox_, OutboxDispatch::Start(journal_path, host->payload_codec_.get(),
                                                    outbox::NatsPublisherOptions{.url = nats_url}));
    host->engine_->AddSink(*host->outbox_);
  }
  if (host->metrics_) {
    RECKON_TRY(auto store, storage::OpenOutboxStore(journal_path, nullptr));
    host->outbox_metrics_ = std::make_unique<OutboxMetrics>(
        *host->metrics_, std::move(store), host->outbox_ ? &host->outbox_->dispatcher() : nullptr,
        clock != nullptr ? *clock : host->system_clock_);
  }
  return host;
}

EmbeddedHost::EmbeddedHost(std::unique_ptr<storage::Journal> journal,
                           EmbeddedHostOptions options)
    : journal_(std::move(journal)),
      owned_tools_(std::make_unique<ToolRegistry>()),
      owned_workflows_(std::make_unique<WorkflowRegistry>()),
      tools_(*owned_tools_),
      workflows_(*owned_workflows_) {
  Build(std::move(options));
}

EmbeddedHost::EmbeddedHost(std::unique_ptr<storage::Journal> journal, ToolRegistry& tools,
                           WorkflowRegistry& workflows, EmbeddedHostOptions options)
    : journal_(std::move(journal)), tools_(tools), workflows_(workflows) {
  Build(std::move(options));
}

void EmbeddedHost::Build(EmbeddedHostOptions options) {
  Clock& clock = options.clock != nullptr ? *options.clock : system_clock_;
  io_ = std::make_unique<asio::io_context>(1);
  worker_ = std::make_unique<LocalWorker>(workflows_, tools_);
  if (!options.metrics_listen.empty()) {
    metrics_listen_ = options.metrics_listen;
    metrics_ = std::make_unique<MetricsRegistry>();
    metrics_sink_ = std::make_unique<MetricsSink>(*metrics_);
    options.engine.on_commit = [sink = metrics_sink_.get()](std::size_t size,
                                                            std::chrono::nanoseconds took) {
      sink->ObserveCommit(size, took);
    };
  }
  engine_ = std::make_unique<Engine>(io_->get_executor(), *journal_, tools_.contracts(), *worker_,
                                     *worker_, clock, std::move(options.engine));
  if (metrics_sink_) {
    engine_->AddSink(*metrics_sink_);
    metrics_listener_ = std::make_unique<MetricsListener>(io_->get_executor(), *metrics_);
  }
  engine_->OnFailed([this](const Error& error) {
    failure_ = Err(Errc::kUnavailable, "the engine stopped (" + error.ToString() +
                                           "); restart the process to recover from the journal");
    io_->stop();
  });
}

EmbeddedHost::~EmbeddedHost() {
  outbox_metrics_.reset();  // reads the dispatcher's counts
  if (outbox_) {
    engine_->RemoveSink(*outbox_);
    outbox_.reset();  // stops the dispatcher before the journal and the codec go
  }
  // The engine first (its timers and committer use the io_context), then the worker and what
  // still runs on the io_context, then the journal.
  metrics_listener_.reset();
  engine_.reset();
  worker_.reset();
  io_.reset();
}

asio::awaitable<Result<int>> EmbeddedHost::Recover() {
  if (metrics_sink_) {
    RECKON_CO_TRY(metrics_sink_->Seed(*journal_));
    RECKON_CO_TRY(metrics_listener_->Listen(metrics_listen_));
  }
  co_return co_await engine_->Recover();
}

asio::awaitable<Result<int>> EmbeddedHost::ApprovePending(std::string decided_by) {
  return ApprovePending(std::move(decided_by), std::string());
}

asio::awaitable<Result<int>> EmbeddedHost::ApprovePending(std::string decided_by,
                                                          std::string workflow_id) {
  int granted = 0;
  for (const RunSummary& run : engine_->Runs()) {
    if (!workflow_id.empty() && run.ref.workflow_id != workflow_id) continue;
    for (const OperationRecord& op : run.operations) {
      if (op.state != OperationState::kAwaitingApproval) continue;
      ApprovalDecision decision;
      decision.approval_id = op.approval_id;
      decision.expected_intent_hash = op.intent_hash;
      decision.granted = true;
      decision.decided_by = decided_by;
      auto decide = engine_->DecideApproval(run.ref.workflow_id, std::move(decision));
      auto decided = co_await std::move(decide);
      if (decided) {
        ++granted;
      } else if (engine_->failed()) {
        co_return decided.error();
      }  // else refused (decided meanwhile, the run stopped): nothing to grant

    }
  }
  co_return granted;
}

asio::awaitable<Result<void>> EmbeddedHost::Settle(std::optional<std::string> approve_as) {
  while (true) {
    RECKON_CO_TRY(co_await engine_->UntilIdle());
    if (!approve_as) co_return Ok();
    RECKON_CO_TRY(int granted, co_await ApprovePending(*approve_as));
    if (granted == 0) co_return Ok();
  }
}

}  // namespace reckon
