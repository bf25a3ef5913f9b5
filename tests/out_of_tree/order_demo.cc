// order-demo: an order-fulfilment workflow in an embedded Reckon, written as a user would
// against an installed Reckon. Reserve stock, charge the card, wait for the warehouse's
// "packed" signal, sleep a little, then email the customer. Every step is journaled in
// JOURNAL; run it again after a kill and it resumes without repeating an effect.
//
//   order-demo JOURNAL        exits 0 when the order completed, 1 otherwise (printing why)
#include <boost/asio/awaitable.hpp>
#include <boost/json.hpp>

#include <chrono>
#include <cstdio>
#include <map>
#include <string>

#include "reckon/host/embedded_host.h"

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;
using reckon::CallResult;
using reckon::Task;
using reckon::WorkflowContext;
using reckon::WorkflowOutcome;

// A provider that keeps what it did by idempotency key (the operation id): a repeated key
// returns the first result instead of acting twice.
struct Provider {
  std::map<std::string, json::value> done;
  int effects = 0;
  json::value Act(const std::string& key, json::value result) {
    auto [it, inserted] = done.emplace(key, std::move(result));
    if (inserted) ++effects;
    return it->second;
  }
};

reckon::ToolContract Contract(std::string name, reckon::SideEffect side_effect) {
  reckon::ToolContract c;
  c.name = std::move(name);
  c.description = "The order step " + c.name + ".";
  c.side_effect = side_effect;
  c.attempt_timeout = 2s;
  c.retry.max_attempts = 3;
  if (side_effect == reckon::SideEffect::kDeduplicatedWrite) c.dedup_window = 24h;
  if (side_effect != reckon::SideEffect::kIdempotentWrite) {
    // An unknown outcome is never retried blind: it waits for a person (a provider with a
    // lookup API would reconcile instead: ReconcileMode::kLookup plus Tool::reconcile).
    c.reconcile.mode = reckon::ReconcileMode::kNeedsHuman;
  }
  if (side_effect == reckon::SideEffect::kNonRepeatableWrite) c.retry.reconcile_on_unknown = true;
  c.input_schema = json::parse(R"({"type": "object"})");
  c.evidence = "The provider's reference, keyed by the operation id.";
  return c;
}

reckon::Tool ProviderTool(std::string name, reckon::SideEffect side_effect, Provider& provider) {
  auto execute = [&provider, name](json::value input,
                                   reckon::ToolCallContext call) -> asio::awaitable<reckon::AttemptOutcome> {
    json::value result = provider.Act(call.operation_id, json::object{{"tool", name}, {"input", input}});
    co_return reckon::ToolSucceeded(std::move(result), name + ":" + call.operation_id);
  };
  return reckon::Tool{Contract(std::move(name), side_effect), std::move(execute), {}};
}

// The workflow: plain C++, each co_await a durable step. (With GCC 12, build a braced
// json::object on its own line: inside a co_await it does not compile, a GCC 12 bug.)
Task<WorkflowOutcome> FulfilOrder(WorkflowContext& ctx, json::value input) {
  json::object order = input.as_object();
  json::object stock{{"sku", order["sku"]}, {"qty", 2}};
  CallResult reserved = co_await ctx.Call("reserve_inventory", std::move(stock));
  if (!reserved) co_return reserved.error();
  json::object charge{{"amount_cents", order["amount_cents"]}};
  CallResult charged = co_await ctx.Call("charge_card", std::move(charge));
  if (!charged) co_return charged.error();
  std::string packed = co_await ctx.WaitSignal("packed");
  co_await ctx.Sleep(10ms);
  json::object email{{"to", order["email"]}, {"packed", packed}};
  CallResult emailed = co_await ctx.Call("send_email", std::move(email));
  if (!emailed) co_return emailed.error();
  co_return json::object{{"charge", charged.value().provider_ref},
                         {"email", emailed.value().provider_ref}};
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: order-demo JOURNAL\n");
    return 2;
  }
  auto opened = reckon::EmbeddedHost::Open(argv[1]);
  if (!opened) {
    std::fprintf(stderr, "order-demo: %s\n", opened.error().ToString().c_str());
    return 1;
  }
  reckon::EmbeddedHost& host = *opened.value();
  Provider provider;
  for (auto [name, side_effect] : {std::pair{"reserve_inventory", reckon::SideEffect::kIdempotentWrite},
                                   std::pair{"charge_card", reckon::SideEffect::kDeduplicatedWrite},
                                   std::pair{"send_email", reckon::SideEffect::kNonRepeatableWrite}}) {
    if (auto registered = host.tools().Register(ProviderTool(name, side_effect, provider)); !registered) {
      std::fprintf(stderr, "order-demo: %s\n", registered.error().ToString().c_str());
      return 1;
    }
  }
  (void)host.workflows().Register("fulfil_order", FulfilOrder);

  reckon::RunSummary order;  // how the order stands when the host is done
  auto main_loop = [&]() -> asio::awaitable<reckon::Result<void>> {
    RECKON_CO_TRY(co_await host.Recover());
    json::object input{{"sku", "SKU-42"}, {"amount_cents", 1999}, {"email", "ada@example.com"}};
    // Starting an order that exists already (even finished in an earlier life) is a no-op.
    RECKON_CO_TRY(co_await host.engine().Start("order-1001", "fulfil_order", input));
    // Settled: finished, or waiting on something outside the engine (here the signal).
    RECKON_CO_TRY(auto settled, co_await host.UntilSettled("order-1001"));
    std::printf("order-1001 waits on: %s %s\n",
                std::string(reckon::WaitKindName(settled.wait.kind)).c_str(),
                settled.wait.detail.c_str());
    if (settled.wait.kind == reckon::WaitKind::kSignal) {
      RECKON_CO_TRY(co_await host.engine().Signal("order-1001", "packed", R"("box 7")"));
      RECKON_CO_TRY(settled, co_await host.UntilSettled("order-1001"));
    }
    order = std::move(settled);
    co_return reckon::Ok();
  };
  auto ran = host.Run(main_loop());
  if (!ran) {
    std::fprintf(stderr, "order-demo: %s\n", ran.error().ToString().c_str());
    return 1;
  }
  std::printf("order-1001: %s %s (provider effects this life: %d)\n",
              std::string(reckon::storage::RunStatusName(order.status)).c_str(),
              order.result_json.c_str(), provider.effects);
  return order.status == reckon::storage::RunStatus::kCompleted ? 0 : 1;
}
