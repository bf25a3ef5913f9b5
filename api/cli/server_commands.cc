#include "reckon/api/cli/age_flag.h"
#include "reckon/api/cli/server_commands.h"

#include <cctype>

#include <boost/json.hpp>

#include <fstream>
#include <memory>
#include <sstream>

#include "reckon/api/cli/remote.h"
#include "reckon/protocol/wire_convert.h"
#include "reckon/api/cli/contract_source.h"
#include "reckon/api/cli/mcp_catalog_command.h"
#include "reckon/api/server/run_server.h"
#include "reckon/api/server/server_limits.h"
#include "reckon/base/jcs.h"
#include "reckon/contract/contract_card.h"
#include "reckon/contract/contract_json.h"
#include "reckon/plan/mcp_catalog.h"

namespace reckon::cli {
namespace {

namespace json = boost::json;
namespace wire = api::wire;
using api::Str;

struct ServerArgs {
  api::ServerConfig config;
  std::string port_file;
  std::string http_port_file;
  long lease_timeout_ms = 5000;
  long shard_lease_ms = 3000;
  long heartbeat_ms = 1000;
  long workflow_task_timeout_ms = 10000;
  std::int64_t history_page_bytes = 2 << 20;
  long query_timeout_ms = 10000;
  std::string sync = "full";
  // Limits against abuse, in the flags' units (docs/SECURITY.md); see ServerOptions.
  std::int64_t max_connections = 1024;
  std::int64_t max_connections_per_peer = 256;
  std::int64_t http_max_connections = 256;
  std::int64_t http_max_connections_per_peer = 64;
  std::int64_t http_handshake_timeout_ms = 10000;
  std::int64_t max_buffered_mib = 256;
  std::int64_t max_in_flight = 256;
  std::int64_t max_unread_reply_kib = 4096;
  std::int64_t idle_timeout_ms = 300000;
  std::int64_t handshake_timeout_ms = 10000;
  std::int64_t unread_reply_timeout_ms = 30000;
  std::string retention;        // --retention AGE; empty: none
  std::string retention_every;  // --retention-every AGE; empty: a quarter of --retention
};

// A flag's value as a count of `unit`: negative values become 0 and huge ones saturate, so that
// ValidateServerOptions reports them as out of range.
std::size_t Scaled(std::int64_t value, std::size_t unit) {
  if (value <= 0) return 0;
  const auto v = static_cast<std::uint64_t>(value);
  return v > (std::uint64_t{1} << 50) / unit ? std::size_t{1} << 50 : v * unit;
}

// The limits against abuse from the flags, checked; Errc::kInvalidArgument naming the flag.
Result<void> ApplyLimitFlags(ServerArgs& args) {
  api::ServerOptions& o = args.config.server;
  o.max_connections = Scaled(args.max_connections, 1);
  o.max_connections_per_peer = Scaled(args.max_connections_per_peer, 1);
  o.max_buffered_bytes = Scaled(args.max_buffered_mib, 1u << 20);
  o.max_in_flight = Scaled(args.max_in_flight, 1);
  o.max_unread_reply_bytes = Scaled(args.max_unread_reply_kib, 1u << 10);
  using std::chrono::milliseconds;
  o.idle_timeout = milliseconds(Scaled(args.idle_timeout_ms, 1));
  o.handshake_timeout = milliseconds(Scaled(args.handshake_timeout_ms, 1));
  o.unread_reply_timeout = milliseconds(Scaled(args.unread_reply_timeout_ms, 1));
  RECKON_TRY(api::ValidateServerOptions(o));
  api::HttpServerOptions& http = args.config.http;
  http.max_connections = Scaled(args.http_max_connections, 1);
  http.max_connections_per_peer = Scaled(args.http_max_connections_per_peer, 1);
  http.handshake_timeout = milliseconds(Scaled(args.http_handshake_timeout_ms, 1));
  return api::ValidateHttpServerOptions(http);
}

void RunServerCommand(CommandEnv& env, ServerArgs& args) {
  if (Result<void> limits = ApplyLimitFlags(args); !limits) {
    ReportError(env, "server", limits.error());
    return;
  }
  if (args.heartbeat_ms * 2 > args.lease_timeout_ms) {
    ReportError(env, "server",
                Err(Errc::kInvalidArgument,
                    "--heartbeat-ms (" + std::to_string(args.heartbeat_ms) +
                        ") must be at most half of --lease-timeout-ms (" +
                        std::to_string(args.lease_timeout_ms) +
                        "), or one late heartbeat loses a lease"));
    return;
  }
  if (!args.retention.empty()) {
    auto age = ParseAge(args.retention, "--retention");
    if (!age) return ReportError(env, "server", age.error());
    args.config.retention = age.value();
  }
  if (!args.retention_every.empty()) {
    auto every = ParseAge(args.retention_every, "--retention-every");
    if (!every) return ReportError(env, "server", every.error());
    args.config.retention_every = std::chrono::duration_cast<std::chrono::milliseconds>(every.value());
  }
  if (args.config.history.warn_events < 0 || args.config.history.max_events < 0) {
    return ReportError(env, "server", Err(Errc::kInvalidArgument,
                                          "--history-warn-events and --history-max-events "
                                          "take a count >= 0 (0 turns the limit off)"));
  }
  args.config.tasks.lease_timeout = std::chrono::milliseconds(args.lease_timeout_ms);
  args.config.cluster.lease = std::chrono::milliseconds(args.shard_lease_ms);
  args.config.tasks.heartbeat_interval = std::chrono::milliseconds(args.heartbeat_ms);
  args.config.tasks.workflow_task_timeout =
      std::chrono::milliseconds(args.workflow_task_timeout_ms);
  args.config.tasks.history_page_bytes = static_cast<std::size_t>(args.history_page_bytes);
  args.config.tasks.query_timeout = std::chrono::milliseconds(args.query_timeout_ms);
  args.config.journal.sync = args.sync == "normal" ? storage::SqliteJournalOptions::Sync::kNormal
                             : args.sync == "off"  ? storage::SqliteJournalOptions::Sync::kOff
                                                   : storage::SqliteJournalOptions::Sync::kFull;
  // Port files are written to a temporary name and renamed, so a reader never sees a partial
  // file.
  auto port_writer = [](std::string path) {
    return [path](std::uint16_t port) {
      const std::string tmp = path + ".tmp";
      std::ofstream(tmp) << port << "\n";
      std::rename(tmp.c_str(), path.c_str());
    };
  };
  if (!args.port_file.empty()) args.config.on_listening = port_writer(args.port_file);
  if (!args.http_port_file.empty()) {
    args.config.on_http_listening = port_writer(args.http_port_file);
  }
  env.exit_code = api::RunServer(args.config);
}

struct ContractsArgs {
  RemoteFlags remote;
  bool cards = false;
  std::string mcp;      // a tools/list result file, or 'COMMAND ARGS' of a stdio MCP server
  std::string mcp_url;  // a Streamable HTTP MCP server
  ContractSource contracts;  // --mcp checks against --contracts FILE, else the server's
};

// `reckon contracts --mcp FILE`: an MCP tools/list result against the declared contracts (a
// --contracts FILE, else the server's).
Result<void> RunMcp(CommandEnv& env, const ContractsArgs& args) {
  std::ifstream in(args.mcp);
  if (!in) return Err(Errc::kInvalidArgument, "cannot read MCP catalog '" + args.mcp + "'");
  std::ostringstream text;
  text << in.rdbuf();
  auto catalog = ParseStrictJson(text.str());
  if (!catalog) return catalog.error().WithContext(args.mcp);
  RECKON_TRY(ContractRegistry declared, LoadContracts(args.contracts, args.remote));
  RECKON_TRY(McpCatalogReport report, AnalyzeMcpCatalog(catalog.value(), declared));
  const std::string out = args.remote.json
                              ? json::serialize(McpReportJson(report)) + "\n"
                              : "MCP catalog " + args.mcp + " against " +
                                    args.contracts.Describe(args.remote) + ":\n" +
                                    RenderMcpReport(report);
  return WriteOut(env, out);
}

// `reckon contracts --contracts FILE`: the file's contracts, listed as the server lists its own
// (no server needed).
Result<void> RunContractsFile(CommandEnv& env, const ContractsArgs& args) {
  RECKON_TRY(ContractRegistry registry, LoadContractsFile(args.contracts.file));
  std::string text;
  std::vector<std::vector<std::string>> rows = {{"TOOL", "SIDE EFFECT", "CONTRACT HASH"}};
  json::array out;
  for (const ToolContract* contract : registry.All()) {
    const ToolContract& c = *contract;
    RECKON_TRY(std::string hash, ContractHash(c));
    if (args.remote.json) {
      out.push_back(json::object{{"name", c.name},
                                 {"hash", hash},
                                 {"side_effect", SideEffectName(c.side_effect)},
                                 {"contract", ContractToJson(c)}});
    } else if (args.cards) {
      text += RenderContractCard(c) + "\n";
    } else {
      rows.push_back({c.name, std::string(SideEffectName(c.side_effect)), hash});
    }
  }
  if (args.remote.json) {
    text = json::serialize(out) + "\n";
  } else if (!args.cards) {
    text = RenderTable(rows) + std::to_string(rows.size() - 1) + " contract(s) in " +
           args.contracts.file + "\n";
  }
  return WriteOut(env, text);
}

Result<void> RunContracts(CommandEnv& env, const ContractsArgs& args) {
  if (!args.mcp_url.empty() || (!args.mcp.empty() && !IsMcpCatalogFile(args.mcp))) {
    tools::McpServerAddress server;
    (args.mcp_url.empty() ? server.command : server.url) =
        args.mcp_url.empty() ? args.mcp : args.mcp_url;
    return RunLiveMcpCatalog(env, server, args.contracts.file, args.remote.json);
  }
  if (!args.mcp.empty()) return RunMcp(env, args);
  if (!args.contracts.file.empty()) return RunContractsFile(env, args);
  auto request = NewRequest();
  request->getRoot<wire::Request>().initMethod().setListContracts();
  RECKON_TRY(api::Reply reply, CallServer(args.remote, std::move(request)));
  auto contracts = reply.get().getResult().getContracts();
  std::string text;
  if (args.remote.json) {
    json::array out;
    for (auto c : contracts) {
      out.push_back(json::object{{"name", Str(c.getName())},
                                 {"hash", Str(c.getHash())},
                                 {"side_effect", Str(c.getSideEffect())},
                                 {"contract", json::parse(Str(c.getContractJson()))}});
    }
    text = json::serialize(out) + "\n";
  } else if (args.cards) {
    for (auto c : contracts) text += Str(c.getCard()) + "\n";
  } else {
    std::vector<std::vector<std::string>> rows = {{"TOOL", "SIDE EFFECT", "CONTRACT HASH"}};
    for (auto c : contracts) {
      rows.push_back({Str(c.getName()), Str(c.getSideEffect()), Str(c.getHash())});
    }
    text = RenderTable(rows) + std::to_string(contracts.size()) + " contract(s)\n";
  }
  return WriteOut(env, text);
}

}  // namespace

void AddServerCommands(CLI::App& app, CommandEnv& env) {
  {
    auto args = std::make_shared<ServerArgs>();
    CLI::App* c = app.add_subcommand(
        "server", "Run the engine as a server that workers and the CLI connect to");
    c->add_option("--journal", args->config.journal_path, "SQLite journal file (created if new), or a PostgreSQL database: postgresql://USER@HOST:PORT/DB")
        ->required();
    c->add_option("--listen", args->config.listen, "HOST:PORT to listen on (port 0: any free)")
        ->capture_default_str();
    c->add_option("--trace", args->config.trace_path,
                  "Effect trace JSON-lines file (default <journal>.trace.jsonl)");
    c->add_flag("--quiet", args->config.quiet, "No log line per transition");
    c->add_option("--otlp-endpoint", args->config.otlp_endpoint,
                  "Export the effect lifecycle as OpenTelemetry spans over OTLP/HTTP JSON to "
                  "this collector (POST URL/v1/traces; docs/OPERATIONS.md, \"OTLP traces\")")
        ->type_name("URL");
    c->add_option("--payload-key", args->config.payload_key_file,
                  "Payload key file: seal inputs, results and other payloads in the journal "
                  "with AES-256-GCM (docs/SECURITY.md, \"Payloads at rest\")");
    c->add_option("--nats-url", args->config.nats_url,
                  "Deliver what workflows publish (the transactional outbox) to this NATS "
                  "server with JetStream, nats://HOST:PORT; without it messages wait");
    c->add_flag("--inline-commit", args->config.inline_commit,
                "Commit on the event loop's thread, not a commit thread (lower latency alone, "
                "lower throughput under load; see docs/PERFORMANCE.md)");
    c->add_option("--retention", args->retention,
                  "Archive finished runs last updated more than AGE ago (30d, 12h, 15m, 90s) "
                  "into <journal>.archive/ (or --archive-dir) and delete them from the journal, "
                  "in the background (docs/OPERATIONS.md, \"Retention\")")
        ->type_name("AGE");
    c->add_option("--archive-dir", args->config.archive_dir,
                  "Where --retention writes its archive files (default <journal>.archive)")
        ->type_name("DIR");
    c->add_option("--retention-every", args->retention_every,
                  "Between --retention passes (default a quarter of AGE, 200 ms to 10 min)")
        ->type_name("AGE");
    c->add_option("--history-warn-events", args->config.history.warn_events,
                  "Log a warning when a run's history passes this many events (0: never)")
        ->capture_default_str();
    c->add_option("--history-max-events", args->config.history.max_events,
                  "Fail a run whose history passes this many events with history_too_large "
                  "(0: no limit); the workflow should continue as new before")
        ->capture_default_str();
    c->add_option("--port-file", args->port_file, "Write the bound port to this file");
    c->add_option("--http", args->config.http_listen,
                  "Serve the web console and the JSON HTTP API on HOST:PORT (docs/HTTP_API.md; "
                  "HTTPS with --tls-cert; loopback only without it)")
        ->type_name("HOST:PORT");
    c->add_option("--http-port-file", args->http_port_file,
                  "Write the bound HTTP port to this file");
    c->add_flag("--no-metrics", [args](std::int64_t) { args->config.metrics = false; },
                "Keep no Prometheus metrics (by default /metrics is served on the --http port; "
                "docs/OPERATIONS.md)");
    c->add_option("--admin-token-file", args->config.admin_token_file,
                  "Where the first start writes the admin token (default <journal>.admin-token)")
        ->type_name("FILE");
    c->add_option("--tls-cert", args->config.tls.cert_file,
                  "Serve TLS with this certificate chain (PEM, the server's certificate first)")
        ->type_name("FILE");
    c->add_option("--tls-key", args->config.tls.key_file, "The private key of --tls-cert (PEM)")
        ->type_name("FILE");
    c->add_option("--client-ca", args->config.tls.client_ca_file,
                  "Require client certificates signed by these CAs (PEM; mTLS, e.g. for "
                  "workers)")
        ->type_name("FILE");
    c->add_flag("--insecure-dev", args->config.insecure_dev,
                "Development only, loopback only: requests without a token act as the "
                "principal 'dev' with every permission");
    c->add_option("--namespace", args->config.id_namespace,
                  "Part of every operation id (the providers' idempotency key) and message id "
                  "of the runs this server starts; give each journal that shares providers its "
                  "own (docs/VERSIONING.md)")
        ->check([](const std::string& value) -> std::string {
          if (value.empty() || value.size() > 64) return "1 to 64 characters";
          for (char c : value) {
            if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' &&
                c != '.') {
              return "letters, digits, '-', '_' and '.' only";
            }
          }
          return "";
        })
        ->type_name("NAME")
        ->capture_default_str();
    c->add_flag("--cluster", args->config.cluster.enabled,
                "Be one of several servers on one PostgreSQL journal, owning the shards it "
                "holds leases on (docs/DEPLOYMENT.md, \"Several nodes\")");
    c->add_option("--advertise", args->config.cluster.advertise,
                  "--cluster: HOST:PORT where clients reach this server, named in redirects "
                  "(default: the --listen host and the bound port)")
        ->type_name("HOST:PORT");
    c->add_option("--server-id", args->config.cluster.server_id,
                  "--cluster: this server's name in the lease table (default: its advertised "
                  "address); one name per server process")
        ->type_name("NAME");
    c->add_option("--shard-lease-ms", args->shard_lease_ms,
                  "--cluster: how long a shard lease lasts (renewed every third of it); a dead "
                  "server's shards are taken over once it expired")
        ->check(CLI::Range(300L, 600000L))
        ->capture_default_str();
    c->add_option("--lease-timeout-ms", args->lease_timeout_ms,
                  "A tool task not heartbeaten this long is lost (outcome unknown)")
        ->check(CLI::Range(100L, 3600000L))
        ->capture_default_str();
    c->add_option("--history-page-bytes", args->history_page_bytes,
                  "Bytes of history events per page of a workflow task (docs/PROTOCOL.md, "
                  "\"History pages\"); at most half the frame limit is used")
        ->check(CLI::Range(std::int64_t{256}, std::int64_t{64} << 20))
        ->capture_default_str();
    // Under the clients' own 30 s wait for a reply, so a slow query fails with the server's
    // message (which says whether any worker hosts the type) rather than a client timeout.
    c->add_option("--query-timeout-ms", args->query_timeout_ms,
                  "How long a query, or an update's validation, waits for a worker to answer")
        ->check(CLI::Range(100L, 25000L))
        ->capture_default_str();
    c->add_option("--heartbeat-ms", args->heartbeat_ms, "How often workers heartbeat")
        ->check(CLI::Range(50L, 600000L))
        ->capture_default_str();
    c->add_option("--workflow-task-timeout-ms", args->workflow_task_timeout_ms,
                  "A workflow task not completed this long goes to another worker")
        ->check(CLI::Range(100L, 3600000L))
        ->capture_default_str();
    // Limits against abuse (docs/SECURITY.md, "Limits against abuse").
    c->add_option("--max-connections", args->max_connections,
                  "Connections open at once; over it a new one takes the slot of one that has sent "
                  "nothing yet or is idle, and is told why and closed only when all are busy")
        ->capture_default_str();
    c->add_option("--max-connections-per-peer", args->max_connections_per_peer,
                  "Of those, connections one IP address may hold; over either limit a new "
                  "connection takes the slot of one that has sent nothing yet or is idle")
        ->capture_default_str();
    c->add_option("--http-max-connections", args->http_max_connections,
                  "Connections open at once on the --http port")
        ->capture_default_str();
    c->add_option("--http-max-connections-per-peer", args->http_max_connections_per_peer,
                  "Of those, connections one IP address may hold (the same rule as "
                  "--max-connections-per-peer)")
        ->capture_default_str();
    c->add_option("--http-handshake-timeout-ms", args->http_handshake_timeout_ms,
                  "A connection to the --http port that sends no whole request this long after "
                  "connecting (TLS handshake included) is closed")
        ->capture_default_str();
    c->add_option("--max-buffered-mib", args->max_buffered_mib,
                  "Memory for all connections' read buffers, requests and unsent replies")
        ->capture_default_str();
    c->add_option("--max-in-flight", args->max_in_flight,
                  "Requests unanswered per connection before it stops being read")
        ->capture_default_str();
    c->add_option("--max-unread-reply-kib", args->max_unread_reply_kib,
                  "Replies queued per connection before it stops being read")
        ->capture_default_str();
    c->add_option("--unread-reply-timeout-ms", args->unread_reply_timeout_ms,
                  "A connection whose peer leaves replies over that bound unread this long is "
                  "closed")
        ->capture_default_str();
    c->add_option("--idle-timeout-ms", args->idle_timeout_ms,
                  "A connection with no request for this long is closed")
        ->capture_default_str();
    c->add_option("--handshake-timeout-ms", args->handshake_timeout_ms,
                  "A connection that sends no whole request this long after connecting is "
                  "closed")
        ->capture_default_str();
    c->add_option("--sync", args->sync,
                  "full (default: survives power loss) | normal | off (benchmarks only)")
        ->check(CLI::IsMember({"full", "normal", "off"}));
    c->callback([&env, args] { RunServerCommand(env, *args); });
  }
  {
    auto args = std::make_shared<ContractsArgs>();
    CLI::App* c = app.add_subcommand("contracts", "List the tool contracts a server knows");
    c->add_flag("--cards", args->cards, "Print each contract card for people");
    auto* mcp = c->add_option(
                  "--mcp", args->mcp,
                  "Check an MCP server's tools: the class each tool's annotations suggest, "
                  "conflicts with declared contracts, tools without one. FILE: a saved "
                  "tools/list result (against the server's contracts unless --contracts is "
                  "given); 'COMMAND ARGS': a stdio MCP server to spawn and ask (with "
                  "--contracts, the MCP contracts file)")
        ->type_name("FILE|'COMMAND ARGS'");
    c->add_option("--mcp-url", args->mcp_url,
                  "Check the tools of a Streamable HTTP MCP server (http://HOST:PORT/PATH) "
                  "against --contracts FILE")
        ->type_name("URL")
        ->excludes(mcp);
    AddContractSourceFlag(c, args->contracts);
    AddRemoteFlags(c, args->remote);
    c->callback([&env, args] {
      if (Result<void> result = RunContracts(env, *args); !result) {
        ReportError(env, "contracts", result.error());
      }
    });
  }
}

}  // namespace reckon::cli
