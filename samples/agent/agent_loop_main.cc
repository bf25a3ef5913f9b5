// agent-loop: the long-running agent sample on the embedded engine. A model proposes plan
// fragments, Reckon runs them over the refund tools, and the loop goes on until the model says
// it is done. SIGKILL it at any moment and start it again with the same arguments: it resumes
// from the journal without asking the model, or calling a tool, again for what is journaled.
//
//   agent-loop --journal PATH --provider URL [--id WORKFLOW_ID] [--goal TEXT]
//              [--model scripted | --model http --model-url URL --model-name NAME [--api-key K]]
//              [--script FILE] [--approve-all] [--seed S]
//
// --model scripted (default) replies from a built-in script (or --script FILE, a JSON array of
// strings); --model http talks to an OpenAI-compatible /v1/chat/completions endpoint.
// Exit codes: 0 the loop finished; 1 it failed or the engine stopped; 2 bad usage; 3 waiting for
// a person (run again with --approve-all, or approve on a server).
#include <CLI/CLI.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>

#include "samples/agent/agent_loop.h"
#include "samples/agent/default_script.h"
#include "samples/agent/openai_chat_model.h"
#include "samples/agent/propose_tool.h"
#include "samples/agent/scripted_model.h"
#include "samples/common/http_url.h"
#include "samples/refund/refund_tools.h"
#include "reckon/telemetry/jsonl_trace_sink.h"
#include "reckon/telemetry/log_trace_sink.h"
#include "reckon/host/embedded_host.h"

namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace reckon;

struct Options {
  std::string journal, provider, id = "agent-1", goal = agent::kDefaultGoal;
  std::string model = "scripted", model_url, model_name = "reckon-sample", api_key, script;
  bool approve_all = false;
  std::uint64_t seed = 1;
};

Result<std::vector<std::string>> LoadScript(const std::string& path) {
  if (path.empty()) return agent::DefaultScript();
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  boost::system::error_code ec;
  json::value value = json::parse(text.str(), ec);
  if (ec || !value.is_array()) {
    return Err(Errc::kInvalidArgument, "--script " + path + ": not a JSON array of strings");
  }
  std::vector<std::string> script;
  for (const auto& entry : value.as_array()) {
    if (!entry.is_string()) return Err(Errc::kInvalidArgument, "--script: entries must be strings");
    script.emplace_back(entry.as_string());
  }
  return script;
}

asio::awaitable<int> Run(EmbeddedHost& host, const Options& options) {
  Engine& engine = host.engine();
  auto recovered = co_await host.Recover();
  if (!recovered) {
    spdlog::error("recovery failed: {}", recovered.error().ToString());
    co_return 1;
  }
  auto start = engine.Start(options.id, agent::kAgentLoopWorkflow,
                            json::object{{"goal", options.goal}, {"max_rounds", 8}});
  auto started = co_await std::move(start);
  if (!started) {
    spdlog::error("cannot start {}: {}", options.id, started.error().ToString());
    co_return 1;
  }
  // A loop that finished (in this life or an earlier one) is read from the journal by
  // Describe below; settling it is a no-op.
  // Until every batch is durable and only a person could let the loop go on (or it ended).
  std::optional<std::string> approve_as;
  if (options.approve_all) approve_as = "agent-loop.approve-all";
  if (auto settled = co_await host.Settle(approve_as); !settled) {
    spdlog::error("{}", settled.error().ToString());
    co_return 1;
  }
  auto run = engine.Describe(options.id);
  if (!run) co_return 1;
  std::printf("%s %s %s\n", options.id.c_str(),
              std::string(storage::RunStatusName(run->status)).c_str(), run->result_json.c_str());
  if (run->status == storage::RunStatus::kCompleted) co_return 0;
  co_return run->status == storage::RunStatus::kRunning ? 3 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app("agent-loop: a model proposes plan fragments, Reckon runs them durably", "agent-loop");
  app.add_option("--journal", o.journal, "SQLite journal")->required();
  app.add_option("--provider", o.provider, "payments provider base URL")->required();
  app.add_option("--id", o.id, "workflow id of the loop");
  app.add_option("--goal", o.goal, "what the agent should reach");
  app.add_option("--model", o.model, "scripted | http")->check(CLI::IsMember({"scripted", "http"}));
  app.add_option("--model-url", o.model_url, "http model: base URL of the endpoint");
  app.add_option("--model-name", o.model_name, "http model: model name");
  app.add_option("--api-key", o.api_key, "http model: bearer token (or $OPENAI_API_KEY)");
  app.add_option("--script", o.script, "scripted model: JSON array of replies");
  app.add_flag("--approve-all", o.approve_all, "approve every approval the loop asks for");
  app.add_option("--seed", o.seed, "card vault seed");
  CLI11_PARSE(app, argc, argv);
  auto logger = spdlog::stderr_color_mt("trace");
  logger->set_pattern("%H:%M:%S.%e %v");
  spdlog::set_default_logger(spdlog::stderr_color_mt("agent-loop"));
  auto provider = samples::ParseHttpUrl(o.provider);
  if (!provider) {
    std::fprintf(stderr, "agent-loop: --provider: %s\n", provider.error().message().c_str());
    return 2;
  }
  std::unique_ptr<agent::ChatModel> model;
  if (o.model == "http") {
    auto url = samples::ParseHttpUrl(o.model_url);
    if (!url) {
      std::fprintf(stderr, "agent-loop: --model-url: %s\n", url.error().message().c_str());
      return 2;
    }
    if (o.api_key.empty() && std::getenv("OPENAI_API_KEY") != nullptr) o.api_key = std::getenv("OPENAI_API_KEY");
    model = std::make_unique<agent::OpenAiChatModel>(
        agent::OpenAiChatConfig{url.value(), o.model_name, o.api_key});
  } else {
    auto script = LoadScript(o.script);
    if (!script) {
      std::fprintf(stderr, "agent-loop: %s\n", script.error().message().c_str());
      return 2;
    }
    model = std::make_unique<agent::ScriptedModel>(std::move(script).value());
  }
  auto host = EmbeddedHost::Open(o.journal);
  if (!host) {
    std::fprintf(stderr, "agent-loop: %s\n", host.error().ToString().c_str());
    return 1;
  }
  EmbeddedHost& h = *host.value();
  auto trace_file = JsonlTraceSink::Open(o.journal + ".trace.jsonl");
  if (!trace_file) {
    std::fprintf(stderr, "agent-loop: %s\n", trace_file.error().ToString().c_str());
    return 1;
  }
  LogTraceSink trace_log(logger);
  h.AddSink(trace_log);
  h.AddSink(*trace_file.value());
  refund::CardVault vault(o.seed);
  if (auto r = refund::RegisterRefundTools(h.tools(), provider.value(), vault); !r) {
    std::fprintf(stderr, "agent-loop: %s\n", r.error().ToString().c_str());
    return 1;
  }
  (void)h.tools().Register(agent::ProposeTool(*model));
  (void)h.workflows().Register(agent::kAgentLoopWorkflow, agent::AgentLoopWorkflow);
  auto ran = h.Run(Run(h, o));
  if (!ran) {
    std::fprintf(stderr, "agent-loop: %s\n", ran.error().ToString().c_str());
    return 1;
  }
  return ran.value();
}
