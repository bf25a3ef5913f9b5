// refund-story: tells what happened to the refunds of a refund-agent run, from its effect trace
// (JSON lines) and the provider's ledger, and shows next to it what a blind retry does.
//
//   refund-story --trace FILE --provider URL [--blind-retry-provider URL]
//
// For every operation whose outcome became unknown it prints the lifecycle from the trace
// (attempt, outcome_unknown, reconciliation, committed) and the ledger's refunds for that
// idempotency key. With --blind-retry-provider (a scratch provider that does not deduplicate)
// it then replays what a runtime without reconciliation does after a lost reply: the same
// POST /refunds again, and counts the refunds the scratch ledger ends up with.
#include <CLI/CLI.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "reckon/base/jcs.h"
#include "reckon/tools/http/http_client.h"
#include "samples/common/http_url.h"

namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using namespace reckon;

asio::awaitable<void> FetchInto(tools::HttpCall call,
                                std::optional<Result<tools::HttpResponse>>* out) {
  *out = co_await tools::HttpRequest(std::move(call));
}

// Runs one HTTP call to completion on a private io_context.
Result<tools::HttpResponse> Fetch(tools::HttpCall call) {
  asio::io_context io;
  std::optional<Result<tools::HttpResponse>> result;
  asio::co_spawn(io, FetchInto(std::move(call), &result), asio::detached);
  io.run();
  if (!result) return Err(Errc::kInternal, "the HTTP call did not complete");
  return std::move(*result);
}

Result<json::array> Refunds(const samples::HttpEndpoint& provider) {
  tools::HttpCall call;
  call.port = provider.port;
  call.target = "/refunds";
  RECKON_TRY(auto response, Fetch(std::move(call)));
  RECKON_TRY(auto body, tools::ParseJsonBody(response));
  if (!body.is_array()) return Err(Errc::kInvalidArgument, "GET /refunds did not return an array");
  return body.as_array();
}

std::string Str(const json::object& o, const char* key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr) return "";
  if (v->is_string()) return std::string(v->as_string());
  return json::serialize(*v);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"refund-story: what happened to each refund, and what a blind retry would do"};
  std::string trace_path, provider_url, blind_url;
  app.add_option("--trace", trace_path, "the agent's JSON-lines effect trace")->required();
  app.add_option("--provider", provider_url, "the provider the agent used")->required();
  app.add_option("--blind-retry-provider", blind_url, "a scratch provider started with --no-dedup");
  CLI11_PARSE(app, argc, argv);

  auto provider = samples::ParseHttpUrl(provider_url);
  if (!provider) {
    std::fprintf(stderr, "refund-story: --provider: %s\n", provider.error().message().c_str());
    return 2;
  }
  std::ifstream trace(trace_path);
  if (!trace) {
    std::fprintf(stderr, "refund-story: cannot read trace '%s'\n", trace_path.c_str());
    return 2;
  }
  std::map<std::string, std::vector<json::object>> lines_by_op;  // operation id -> trace lines
  std::set<std::string> unknown_ops;
  std::string line;
  int number = 0;
  while (std::getline(trace, line)) {
    ++number;
    auto parsed = ParseStrictJson(line);
    if (!parsed || !parsed.value().is_object()) {
      std::fprintf(stderr, "refund-story: trace line %d is not a JSON object\n", number);
      return 2;
    }
    json::object object = parsed.value().as_object();
    const std::string op = Str(object, "id");
    if (Str(object, "tool") != "send_refund" || op.empty()) continue;
    if (Str(object, "event") == "operation.outcome_unknown") unknown_ops.insert(op);
    lines_by_op[op].push_back(std::move(object));
  }
  auto ledger = Refunds(provider.value());
  if (!ledger) {
    std::fprintf(stderr, "refund-story: %s\n", ledger.error().ToString().c_str());
    return 1;
  }
  std::map<std::string, int> refunds_by_key;
  for (const json::value& refund : ledger.value()) {
    refunds_by_key[Str(refund.as_object(), "idempotency_key")]++;
  }

  std::printf("\n%zu send_refund operations, %zu of them lost a reply or a deadline.\n",
              lines_by_op.size(), unknown_ops.size());
  for (const std::string& op : unknown_ops) {
    const auto& lines = lines_by_op[op];
    std::printf("\n%s (%s)\n", op.c_str(), Str(lines.front(), "workflow_id").c_str());
    for (const json::object& l : lines) {
      std::string detail;
      for (const char* key : {"attempt", "reason", "decision", "round", "result", "source",
                              "provider_ref", "approval"}) {
        std::string value = Str(l, key);
        if (!value.empty()) detail += std::string(" ") + key + "=" + value;
      }
      std::printf("  %-28s%s\n", Str(l, "event").c_str(), detail.c_str());
    }
    std::printf("  ledger: %d refund(s) with idempotency key %s\n", refunds_by_key[op], op.c_str());
  }
  int duplicates = 0;
  for (const auto& [key, count] : refunds_by_key) duplicates += count > 1 ? count - 1 : 0;
  std::printf("\nledger: %zu refunds for %zu operations, %d duplicate(s).\n",
              ledger.value().size(), lines_by_op.size(), duplicates);

  if (blind_url.empty() || unknown_ops.empty()) return duplicates == 0 ? 0 : 1;
  auto blind = samples::ParseHttpUrl(blind_url);
  if (!blind) {
    std::fprintf(stderr, "refund-story: --blind-retry-provider: %s\n", blind.error().message().c_str());
    return 2;
  }
  // A typical runtime: the attempt's reply was lost, the exception says "retry", and the same
  // request goes out again. The scratch provider is one that does not deduplicate.
  const std::string op = *unknown_ops.begin();
  json::object body;
  for (const json::value& refund : ledger.value()) {
    if (Str(refund.as_object(), "idempotency_key") == op) {
      body = {{"payment_id", refund.as_object().at("payment_id")},
              {"amount_cents", refund.as_object().at("amount_cents")},
              {"reason", "blind retry demonstration"}};
    }
  }
  std::printf("\nWhat a blind retry does with the same request, against a provider without dedup:\n");
  for (int attempt = 1; attempt <= 2; ++attempt) {
    tools::HttpCall call;
    call.method = "POST";
    call.port = blind.value().port;
    call.target = "/refunds";
    call.headers = {{"Idempotency-Key", op}, {"Content-Type", "application/json"}};
    call.body = json::serialize(body);
    auto response = Fetch(std::move(call));
    std::printf("  attempt %d: %s\n", attempt,
                response ? ("HTTP " + std::to_string(response.value().status)).c_str()
                         : response.error().message().c_str());
  }
  auto scratch = Refunds(blind.value());
  if (scratch) {
    std::printf("  scratch ledger: %zu refunds for payment %s: the customer is refunded twice.\n",
                scratch.value().size(), Str(body, "payment_id").c_str());
  }
  std::printf("Reckon instead marked the outcome unknown and asked the provider: one refund.\n");
  return duplicates == 0 ? 0 : 1;
}
