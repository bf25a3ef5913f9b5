#include "samples/payments_provider/refund_service.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/array.hpp>

#include <ctime>

#include "samples/payments_provider/payments.h"
#include "samples/payments_provider/refund_request.h"

namespace reckon::samples::provider {
namespace {

std::string Rfc3339(std::chrono::system_clock::time_point when) {
  std::time_t seconds = std::chrono::system_clock::to_time_t(when);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

ServiceReply InternalError(const Error& error) {
  return ErrorReply(500, "internal", error.ToString());
}

// Keeps a key in the in-flight set for as long as it lives (also when the coroutine that
// holds it is destroyed at shutdown).
class InFlight {
 public:
  InFlight(std::set<std::string, std::less<>>& keys, std::optional<std::string> key)
      : keys_(keys), key_(std::move(key)) {
    if (key_) keys_.insert(*key_);
  }
  ~InFlight() {
    if (key_) keys_.erase(*key_);
  }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;

 private:
  std::set<std::string, std::less<>>& keys_;
  std::optional<std::string> key_;
};

}  // namespace

ServiceReply ErrorReply(int status, std::string_view code, std::string_view message,
                        std::string_view field) {
  boost::json::object body{{"error", code}, {"message", message}};
  if (!field.empty()) body["field"] = field;
  return ServiceReply{status, std::move(body)};
}

boost::json::object RefundJson(const Refund& refund) {
  boost::json::object json{{"refund_id", refund.refund_id},
                           {"payment_id", refund.payment_id},
                           {"amount_cents", refund.amount_cents},
                           {"currency", "usd"},
                           {"reason", refund.reason},
                           {"status", "succeeded"},
                           {"created_at", refund.created_at}};
  if (refund.idempotency_key) {
    json["idempotency_key"] = *refund.idempotency_key;
  } else {
    json["idempotency_key"] = nullptr;
  }
  return json;
}

RefundService::RefundService(Ledger& ledger, ProviderConfig config, Clock clock)
    : ledger_(ledger),
      config_(config),
      clock_(std::move(clock)),
      faults_(config.seed, config.faults) {}

ServiceReply RefundService::GetPayment(std::string_view payment_id) const {
  std::optional<Payment> payment = PaymentFor(config_.seed, payment_id);
  if (!payment) {
    return ErrorReply(404, "payment_not_found",
                      "no payment '" + std::string(payment_id) + "' (ids look like pay-123)");
  }
  return ServiceReply{200, PaymentJson(*payment)};
}

boost::asio::awaitable<ServiceReply> RefundService::CreateRefund(
    std::string body, std::optional<std::string> idempotency_key) {
  ParsedRefund parsed = ParseRefundRequest(body);
  if (!parsed) {
    co_return ErrorReply(400, "invalid_request", parsed.error().message, parsed.error().field);
  }
  const RefundRequest& request = parsed.value();
  std::optional<Payment> payment = PaymentFor(config_.seed, request.payment_id);
  if (!payment) {
    co_return ErrorReply(404, "payment_not_found",
                         "no payment '" + request.payment_id + "' (ids look like pay-123)",
                         "payment_id");
  }

  if (config_.dedup && idempotency_key) {
    if (in_flight_.contains(*idempotency_key)) {
      co_return ErrorReply(409, "idempotency_key_in_use",
                           "a request with this Idempotency-Key is still being processed");
    }
    Result<std::optional<Refund>> stored = ledger_.FindByKey(*idempotency_key);
    if (!stored) co_return InternalError(stored.error());
    if (stored.value()) {
      const Refund& original = *stored.value();
      if (RefundRequest{original.payment_id, original.amount_cents, original.reason} !=
          request) {
        co_return ErrorReply(422, "idempotency_key_reused",
                             "this Idempotency-Key was used for a different request ('" +
                                 original.refund_id + "')");
      }
      ServiceReply reply{200, RefundJson(original)};
      reply.replayed = true;
      co_return reply;
    }
  }

  if (request.amount_cents <= 0 || request.amount_cents > payment->amount_cents) {
    co_return ErrorReply(422, "invalid_amount",
                         "amount_cents must be between 1 and the payment's amount (" +
                             std::to_string(payment->amount_cents) + ")",
                         "amount_cents");
  }

  if (rate_limited_ < config_.rate_limit_first) {
    ++rate_limited_;  // before drawing faults: the seeded sequence is unchanged
    co_return ErrorReply(429, "rate_limited", "injected: too many requests, nothing was committed");
  }
  Faults faults = faults_.Next();
  InFlight in_flight(in_flight_, config_.dedup ? idempotency_key : std::nullopt);
  if (config_.delay.count() > 0) {
    boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor, config_.delay);
    auto [ec] = co_await timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    (void)ec;
  }
  if (faults.fail_before_commit) {
    co_return ErrorReply(503, "provider_unavailable", "injected failure: nothing was committed");
  }
  Result<Refund> refund = ledger_.Insert(NewRefund{
      request.payment_id, request.amount_cents, request.reason, idempotency_key,
      Rfc3339(clock_()), config_.refund_id_from_card ? CardTokenIn(body) : std::string()});
  if (!refund) co_return InternalError(refund.error());
  ServiceReply reply{201, RefundJson(refund.value())};
  reply.drop_connection = faults.drop_reply;
  co_return reply;
}

ServiceReply RefundService::FindRefund(std::string_view idempotency_key) {
  Result<std::optional<Refund>> stored = ledger_.FindByKey(idempotency_key);
  if (!stored) return InternalError(stored.error());
  if (!stored.value()) {
    return ErrorReply(404, "not_found", "no refund with this idempotency_key");
  }
  return ServiceReply{200, RefundJson(*stored.value())};
}

ServiceReply RefundService::ListRefunds() {
  Result<std::vector<Refund>> refunds = ledger_.List();
  if (!refunds) return InternalError(refunds.error());
  boost::json::array list;
  for (const Refund& refund : refunds.value()) list.push_back(RefundJson(refund));
  return ServiceReply{200, std::move(list)};
}

}  // namespace reckon::samples::provider
