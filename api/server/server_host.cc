#include <algorithm>

#include "reckon/api/server/server_host.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "reckon/protocol/client.h"
#include "reckon/protocol/credentials.h"
#include "reckon/protocol/tls.h"
#include "reckon/api/server/http/http_api.h"
#include "reckon/api/server/http/http_server.h"
#include "reckon/api/server/listen.h"
#include "reckon/api/server/server_limits.h"
#include "reckon/storage/crypto/aes_gcm_codec.h"
#include "reckon/storage/backend/open_backend.h"

namespace reckon::api {

namespace asio = boost::asio;

namespace {

// Tells the service which run changed, so that watchWorkflow long polls wake up.
class ServiceSink final : public TraceSink {
 public:
  explicit ServiceSink(Service& service) : service_(service) {}
  void OnCommitted(const RunState& run, std::span<const storage::Event>) override {
    service_.RunChanged(run.ref().workflow_id);
  }
  void OnRunStopped(const RunState& run, std::string_view) override {
    service_.RunChanged(run.ref().workflow_id);
  }

 private:
  Service& service_;
};

Result<std::unique_ptr<storage::Journal>> OpenJournal(const ServerConfig& config,
                                                      storage::OpenJournalOptions::Mode mode,
                                                      const storage::ShardFence* fence) {
  storage::OpenJournalOptions options;
  options.mode = mode;
  options.fence = fence;
  options.lease = config.cluster.lease;
  options.payload_codec = config.journal.payload_codec;
  options.sqlite = config.journal;
  auto journal = storage::OpenJournal(config.journal_path, options);
  if (!journal) return journal.error().WithContext("cannot open journal '" + config.journal_path + "'");
  return journal;
}

// Where a file beside the journal goes by default: beside the SQLite file, or for a PostgreSQL
// journal (a URL) in the working directory, as reckon-server<suffix>.
std::string BesideJournal(const ServerConfig& config, const std::string& suffix) {
  if (storage::BackendOf(config.journal_path) == storage::BackendKind::kPostgres) {
    return "reckon-server" + suffix;
  }
  return config.journal_path + suffix;
}

// The codec of --payload-key, or none.
Result<std::unique_ptr<storage::PayloadCodec>> OpenPayloadCodec(const std::string& key_file) {
  if (key_file.empty()) return std::unique_ptr<storage::PayloadCodec>();
  auto codec = storage::OpenPayloadKeyFile(key_file);
  if (!codec) return codec.error().WithContext("cannot use the payload keys (--payload-key)");
  spdlog::info("payloads at rest are sealed with key '{}' of {}",
               codec.value()->sealing_key_id(), key_file);
  return codec;
}

// Every port the server will open, by the listener rule (api/server/listen.h), before anything
// is opened: a refused address stops the start with the rule's message.
Result<void> CheckListeners(const ServerConfig& config) {
  const ListenerSecurity security{config.server.tls != nullptr, config.insecure_dev};
  RECKON_TRY(CheckListener(Listener::kProtocol, config.listen, security));
  if (!config.http_listen.empty()) {
    RECKON_TRY(CheckListener(Listener::kHttp, config.http_listen, security));
  }
  return Ok();
}

}  // namespace

Result<std::unique_ptr<ServerHost>> ServerHost::Create(const ServerConfig& given) {
  RECKON_TRY(ValidateServerOptions(given.server));
  RECKON_TRY(ValidateHttpServerOptions(given.http));
  // Both connections seal and open payloads with the host's codec (owned by the host).
  RECKON_TRY(auto payload_codec, OpenPayloadCodec(given.payload_key_file));
  ServerConfig config = given;
  config.journal.payload_codec = payload_codec.get();
  if (config.tls.enabled() || !config.tls.client_ca_file.empty()) {
    auto tls = MakeServerTlsContext(config.tls);
    if (!tls) return tls.error();
    if (std::string expiry = CertificateExpiryWarning(*tls.value(), config.tls.cert_file);
        !expiry.empty()) {
      spdlog::warn("{}", expiry);
    }
    // One context for both ports. With --client-ca it asks every client for a certificate
    // without requiring one, so a browser without one still reaches the console, and a
    // completion relayed over HTTPS can present the worker's (tls.h).
    config.server.tls = std::move(tls).value();
    config.http.tls = config.server.tls;
  }
  config.server.insecure_dev = config.insecure_dev;
  config.http.insecure_dev = config.insecure_dev;
  RECKON_TRY(CheckListeners(config));
  using Mode = storage::OpenJournalOptions::Mode;
  std::unique_ptr<storage::ShardFence> fence;
  std::unique_ptr<storage::ShardLeases> leases;
  if (config.cluster.enabled) {
    if (storage::BackendOf(config.journal_path) != storage::BackendKind::kPostgres) {
      return Err(Errc::kInvalidArgument,
                 "--cluster needs a PostgreSQL journal (--journal postgresql://...): the "
                 "servers of a cluster share one database, and '" + config.journal_path +
                     "' is a SQLite file");
    }
    if (config.retention.count() > 0) {
      return Err(Errc::kInvalidArgument,
                 "--retention is not available with --cluster yet: a member holds only some "
                 "shards; archive with `reckon admin archive` while no server holds the journal");
    }
    if (config.cluster.lease < std::chrono::milliseconds(300)) {
      return Err(Errc::kInvalidArgument, "--shard-lease-ms must be at least 300");
    }
    fence = std::make_unique<storage::ShardFence>("");
  }
  // Refused if another process owns it: a single server refuses any other holder; a cluster
  // member shares the database with the other members only (its appends are fenced by its
  // shard leases), and refuses a single server's.
  RECKON_TRY(auto journal, OpenJournal(config, fence ? Mode::kClusterMember : Mode::kOwner,
                                       fence.get()));
  if (const std::string warning = journal->integrity_warning(); !warning.empty()) {
    spdlog::warn("{}", warning);
  }
  if (fence) {
    auto opened = storage::ShardLeases::Open(config.journal_path, config.cluster.lease);
    if (!opened) return opened.error().WithContext("cannot read the shard leases");
    leases = std::move(opened).value();
  }
  // A second connection for everything but commits: the commit thread owns the first. It is the
  // owner's companion in this process, so it takes no lock of its own.
  RECKON_TRY(auto reader, OpenJournal(config, Mode::kCompanion, nullptr));
  RECKON_TRY(auto principals, storage::OpenPrincipalStore(config.journal_path));
  RECKON_TRY(auto trace_file, JsonlTraceSink::Open(config.trace_path.empty()
                                                       ? BesideJournal(config, ".trace.jsonl")
                                                       : config.trace_path));
  auto logger = spdlog::get("trace");
  if (!logger) logger = spdlog::stderr_color_mt("trace");
  logger->set_pattern("%H:%M:%S.%e %v");
  if (config.quiet) logger->set_level(spdlog::level::warn);
  auto host = std::unique_ptr<ServerHost>(
      new ServerHost(config, std::move(journal), std::move(reader), std::move(principals),
                     std::move(trace_file), std::move(logger), std::move(fence),
                     std::move(leases)));
  host->payload_codec_ = std::move(payload_codec);
  if (!config.otlp_endpoint.empty()) {
    OtlpExporterOptions otlp;
    otlp.endpoint = config.otlp_endpoint;
    otlp.resource.service_name = "reckon-server";
    RECKON_TRY(host->otlp_, OtlpTraceSink::Start(std::move(otlp)));
    host->engine_->AddSink(*host->otlp_);
    if (config.metrics) {
      OtlpTraceSink* sink = host->otlp_.get();
      host->metrics_.AddCounterCallback(
          "reckon_otlp_dropped_spans_total",
          "Spans the OTLP exporter dropped (queue full, or the collector refused or hung).", {},
          [sink] { return std::vector<GaugeSample>{{{}, static_cast<double>(sink->dropped())}}; });
    }
  }
  if (!config.nats_url.empty()) {
    RECKON_TRY(host->outbox_,
               OutboxDispatch::Start(config.journal_path, host->payload_codec_.get(),
                                     outbox::NatsPublisherOptions{.url = config.nats_url}));
    host->engine_->AddSink(*host->outbox_);
  }
  if (config.metrics) {
    RECKON_TRY(auto store, storage::OpenOutboxStore(config.journal_path, nullptr));
    host->outbox_metrics_ = std::make_unique<OutboxMetrics>(
        host->metrics_, std::move(store), host->outbox_ ? &host->outbox_->dispatcher() : nullptr,
        host->clock_);
  }
  RECKON_TRY(host->PrepareAuthentication());
  if (auto loaded = LoadJournaledContracts(*host->reader_, host->contracts_); !loaded) {
    return loaded.error().WithContext("cannot load the contracts journaled in '" +
                                      config.journal_path + "'");
  }
  return host;
}

Result<void> ServerHost::PrepareAuthentication() {
  if (config_.insecure_dev) {
    spdlog::warn("INSECURE DEVELOPMENT MODE (--insecure-dev): requests without a token act as "
                 "the principal 'dev' with every permission; never use it beyond this machine");
  }
  const std::string path = config_.admin_token_file.empty()
                               ? BesideJournal(config_, ".admin-token")
                               : config_.admin_token_file;
  auto keep = [&path](std::string_view token) { return WriteTokenFile(path, token); };
  RECKON_TRY(bool created, authorizer_->Bootstrap(keep));
  if (created) {
    spdlog::warn("first start on this journal: wrote the admin token to {} (mode 0600); use it "
                 "to create the other principals: reckon auth token create --token-file {} "
                 "--name NAME --role ROLE",
                 path, path);
  }
  return Ok();
}

ServerHost::ServerHost(const ServerConfig& config, std::unique_ptr<storage::Journal> journal,
                       std::unique_ptr<storage::Journal> reader,
                       std::unique_ptr<storage::PrincipalStore> principals,
                       std::unique_ptr<JsonlTraceSink> trace_file,
                       std::shared_ptr<spdlog::logger> trace_logger,
                       std::unique_ptr<storage::ShardFence> fence,
                       std::unique_ptr<storage::ShardLeases> leases)
    : config_(config),
      fence_(std::move(fence)),
      journal_(std::move(journal)),
      reader_(std::move(reader)),
      principals_(std::move(principals)),
      trace_file_(std::move(trace_file)),
      trace_log_(std::move(trace_logger)),
      buffers_(config.server.max_buffered_bytes) {
  authorizer_ = std::make_unique<Authorizer>(*principals_, clock_,
                                             AuthOptions{config_.insecure_dev, std::chrono::seconds(5),
                                                         !config_.tls.client_ca_file.empty()});
  auto damaged = [this](const Error& error) {
    if (error.code() == Errc::kUnavailable) {
      spdlog::critical("{}; stopping: the connection to the journal's database was lost, so a "
                       "restart must reopen the journal and recover from it",
                       error.ToString());
    } else {
      spdlog::critical("{}; stopping: nothing read from a damaged journal can be trusted",
                       error.ToString());
    }
    asio::post(io_, [this] { StopServing(1); });
  };
  const bool database_server =
      storage::BackendOf(config_.journal_path) == storage::BackendKind::kPostgres;
  guarded_reader_ = std::make_unique<storage::CorruptionGuard>(*reader_, std::move(damaged),
                                                               database_server);
  // Reports that arrive after their attempt stopped waiting go to the engine as evidence. The
  // engine exists before the loop runs, so before any report can arrive.
  auto late = [this](const ToolReport& report) {
    if (!report.attempt_outcome) return;
    engine_->ReportLateAttempt(report.workflow_id, report.operation_id, report.attempt,
                               *report.attempt_outcome);
  };
  auto durable = [this](const storage::RunRef& run) { return guarded_reader_->ReadEvents(run); };
  tasks_ = std::make_unique<TaskQueues>(io_.get_executor(), config_.tasks, std::move(late),
                                        std::move(durable));
  EngineOptions engine_options;
  engine_options.decider.worker_name = "server";
  engine_options.decider.id_namespace = config_.id_namespace;
  engine_options.history = config_.history;
  // A child's start is chained to its parent's append, and its id may be another member's
  // shard (docs/ARCHITECTURE.md, decision 44).
  engine_options.child_workflows = !config_.cluster.enabled;
  if (config_.metrics) {
    metrics_sink_ = std::make_unique<MetricsSink>(metrics_);
    engine_options.on_commit = [sink = metrics_sink_.get()](std::size_t size,
                                                            std::chrono::nanoseconds took) {
      sink->ObserveCommit(size, took);
    };
    RegisterQueueMetrics();
  }
  if (!config_.inline_commit) {
    engine_options.commit_executor = commit_thread_.get_executor();
    engine_options.reader = guarded_reader_.get();
  }
  engine_ = std::make_unique<Engine>(io_.get_executor(), *journal_, contracts_, *tasks_, *tasks_,
                                     clock_, std::move(engine_options));
  if (fence_) {
    ClusterOptions cluster;
    cluster.lease = config_.cluster.lease;
    cluster_ = std::make_unique<ClusterMember>(io_.get_executor(), *engine_, *fence_,
                                               std::move(leases), std::move(cluster));
  }
  service_ = std::make_unique<Service>(*guarded_reader_, contracts_, *engine_, *tasks_,
                                       *authorizer_, config_.server.limits.max_message_bytes,
                                       cluster_.get());
  server_ = std::make_unique<Server>(io_.get_executor(), *service_, buffers_, config_.server);
  credential_watch_ = std::make_unique<CredentialWatch>(io_.get_executor(), *authorizer_, *server_);
  engine_->AddSink(trace_log_);
  engine_->AddSink(*trace_file_);
  if (metrics_sink_) engine_->AddSink(*metrics_sink_);
  engine_->OnFailed([this](const Error& error) {
    spdlog::critical("engine stopped: {}; exiting so that a restart recovers from the journal",
                     error.ToString());
    StopServing(1);
  });
}

ServerHost::~ServerHost() {
  // The commit thread first: a commit in flight still uses the engine's group committer. Then
  // the rest in reverse of construction.
  retention_.reset();  // its pass in flight (on the commit thread) finished with the join
  commit_thread_.join();
  outbox_metrics_.reset();  // reads the dispatcher's counts
  if (outbox_) {
    engine_->RemoveSink(*outbox_);
    outbox_.reset();
  }
  http_.reset();
  http_api_.reset();
  credential_watch_.reset();
  server_.reset();
  service_.reset();
  cluster_.reset();
  engine_.reset();
  if (metrics_sink_) {
    for (const char* name : {"reckon_task_queue_depth", "reckon_task_lease_losses_total",
                             "reckon_connected_workers"}) {
      metrics_.RemoveCallback(name);
    }
  }
  tasks_.reset();
}

void ServerHost::Stop() {
  asio::post(io_, [this] { StopServing(0); });
}

void ServerHost::StartRetention() {
  RetentionOptions options;
  options.age = config_.retention;
  options.every = config_.retention_every;
  if (options.every.count() == 0) {
    options.every = std::clamp(
        std::chrono::duration_cast<std::chrono::milliseconds>(config_.retention / 4),
        std::chrono::milliseconds(200), std::chrono::milliseconds(600'000));
  }
  options.archive_dir =
      config_.archive_dir.empty() ? BesideJournal(config_, ".archive") : config_.archive_dir;
  options.now_us = [this] { return clock_.NowMicros(); };
  spdlog::info("retention: finished runs older than {} s move to archives in {} (a pass every "
               "{} ms)",
               config_.retention.count() / 1'000'000, options.archive_dir,
               options.every.count());
  retention_ = std::make_unique<RetentionLoop>(io_.get_executor(), engine_->committer(),
                                               std::move(options));
  retention_->Start();
}

void ServerHost::StopServing(int exit_code) {
  if (exit_code != 0) exit_code_ = exit_code;
  if (retention_) retention_->Stop();
  if (cluster_) cluster_->Stop();
  signals_.cancel();
  credential_watch_->Stop();
  server_->Stop();
  if (http_) http_->Stop();
  io_.stop();
}

// Task queues and workers, read from the task queues at scrape time (on the loop). Outbox and
// OTLP metrics are registered the same way by their owners (docs/OPERATIONS.md).
void ServerHost::RegisterQueueMetrics() {
  metrics_.AddGaugeCallback(
      "reckon_task_queue_depth", "Tasks waiting in a queue for a worker to take them.",
      {"kind", "queue"}, [this] {
        std::vector<GaugeSample> out;
        for (const TaskQueues::QueueStats& s : tasks_->queue_stats()) {
          out.push_back({{s.kind, s.queue}, static_cast<double>(s.queued)});
        }
        return out;
      });
  metrics_.AddCounterCallback(
      "reckon_task_lease_losses_total",
      "Leases lost: workflow tasks that timed out on their worker, tool tasks not heartbeaten.",
      {"kind", "queue"}, [this] {
        std::vector<GaugeSample> out;
        for (const TaskQueues::QueueStats& s : tasks_->queue_stats()) {
          out.push_back({{s.kind, s.queue}, static_cast<double>(s.leases_lost)});
        }
        return out;
      });
  metrics_.AddGaugeCallback("reckon_connected_workers", "Worker sessions now connected.", {},
                            [this] {
                              return std::vector<GaugeSample>{
                                  {{}, static_cast<double>(tasks_->connected_sessions())}};
                            });
}

asio::awaitable<void> ServerHost::Start() {
  if (metrics_sink_) {
    if (auto seeded = metrics_sink_->Seed(*guarded_reader_); !seeded) {
      spdlog::error("cannot read the operations for the metrics: {}", seeded.error().ToString());
      StopServing(1);
      co_return;
    }
  }
  if (cluster_) {
    // The member takes shards and recovers their runs as it goes.
    const std::string address = config_.cluster.advertise.empty()
                                    ? ParseHostPort(config_.listen).value().host + ":" +
                                          std::to_string(server_->port())
                                    : config_.cluster.advertise;
    cluster_->Identify(config_.cluster.server_id.empty() ? address : config_.cluster.server_id,
                       address);
    asio::co_spawn(io_, cluster_->Run(), asio::detached);
    spdlog::info("reckon server on port {} of {} (journal {}, {} contract(s); cluster member, "
                 "runs are recovered shard by shard)",
                 server_->port(), config_.listen, config_.journal_path, contracts_.size());
  } else {
    auto recovered = co_await engine_->Recover();
    if (!recovered) {
      spdlog::error("recovery failed: {}", recovered.error().ToString());
      StopServing(1);
      co_return;
    }
    spdlog::info("reckon server on port {} of {} (journal {}, {} contract(s), {} run(s) resumed)",
                 server_->port(), config_.listen, config_.journal_path, contracts_.size(),
                 recovered.value());
  }
  if (config_.retention.count() > 0) StartRetention();
  if (http_) {
    spdlog::info("console and HTTP API on {}://{}:{}/ (docs/HTTP_API.md)",
                 config_.server.tls ? "https" : "http",
                 ParseHostPort(config_.http_listen).value().host, http_->port());
    if (config_.on_http_listening) config_.on_http_listening(http_->port());
    asio::co_spawn(io_, http_->Serve(), asio::detached);
  }
  if (config_.on_listening) config_.on_listening(server_->port());
  credential_watch_->Start();
  co_await server_->Serve();
}

int ServerHost::Run() {
  if (!config_.http_listen.empty()) {
    http_api_ = std::make_unique<HttpApi>(*service_, console_sessions_,
                                          config_.http.tls != nullptr,
                                          config_.metrics ? &metrics_ : nullptr);
    http_ = std::make_unique<HttpServer>(io_.get_executor(), *http_api_, config_.http);
    if (auto listening = http_->Listen(config_.http_listen); !listening) {
      spdlog::error("{}", listening.error().ToString());
      return 1;
    }
  }
  if (auto listening = server_->Listen(config_.listen); !listening) {
    spdlog::error("{}", listening.error().ToString());
    return 1;
  }
  ServiceSink service_sink(*service_);
  engine_->AddSink(service_sink);
  signals_.async_wait([this](const boost::system::error_code& ec, int signal) {
    if (ec) return;
    spdlog::info("signal {}: stopping (the journal holds everything; a restart resumes)", signal);
    StopServing(0);
  });
  asio::co_spawn(io_, Start(), asio::detached);
  io_.run();
  if (cluster_) cluster_->Leave();
  engine_->RemoveSink(service_sink);
  return exit_code_;
}

}  // namespace reckon::api
