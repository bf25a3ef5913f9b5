// RefundService: the fake provider's business logic, independent of HTTP framing. It answers
// with a status and a JSON body; the router turns that into an HTTP response.
//
// POST /refunds, in order (the first rule that applies answers):
//   1. body shape (ParseRefundRequest)                    400 invalid_request, naming the field
//   2. unknown payment id                                 404 payment_not_found
//   3. with dedup and an Idempotency-Key:
//        a request with this key is still being processed  409 idempotency_key_in_use
//        the key is in the ledger with the same request    200 the stored refund, replayed
//        the key is in the ledger with another request     422 idempotency_key_reused
//   4. amount_cents <= 0 or above the payment's amount     422 invalid_amount
//   4b. the first rate_limit_first new refunds               429 rate_limited, nothing stored
//   5. draw the faults (FaultPlan::Next), wait delay_ms
//   6. fail_before_commit                                 503 provider_unavailable, nothing stored
//   7. commit to the ledger (durable), then drop_reply    close without replying
//                                             otherwise   201 the new refund
// Without dedup (--no-dedup) step 3 is skipped entirely: the key is still stored, so a
// lookup by key finds the first refund made with it, but nothing stops a second one.
// Replays and refusals draw no faults and are not delayed. Ledger failures answer 500.
//
// Concurrency: single-threaded. Everything here (the ledger, the in-flight keys, the RNG)
// belongs to the provider's one io_context thread; the only suspension point is the delay,
// and the in-flight set is what keeps a concurrent request with the same key out of it.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "samples/payments_provider/faults.h"
#include "samples/payments_provider/ledger.h"

namespace reckon::samples::provider {

struct ProviderConfig {
  std::uint64_t seed = 1;  // payments' amounts and the fault sequence
  FaultRates faults;
  std::chrono::milliseconds delay{0};  // before committing (or failing) a new refund
  bool dedup = true;                   // false: --no-dedup
  int rate_limit_first = 0;            // --rate-limit-first: refuse this many with 429 first
  // --refund-id-from-card: new refunds get ids that embed the request's card token
  // (re_<token>_<seq>), as a careless provider's might: what a client must keep secret.
  bool refund_id_from_card = false;
};

struct ServiceReply {
  int status = 200;
  boost::json::value body;
  bool replayed = false;         // send "Idempotent-Replayed: true"
  bool drop_connection = false;  // the refund is committed: close without any reply
};

// Error bodies: {"error": code, "message": message} plus "field" when given.
ServiceReply ErrorReply(int status, std::string_view code, std::string_view message,
                        std::string_view field = {});

class RefundService {
 public:
  using Clock = std::function<std::chrono::system_clock::time_point()>;

  // `ledger` must outlive the service. `clock` stamps created_at.
  RefundService(Ledger& ledger, ProviderConfig config, Clock clock);

  ServiceReply GetPayment(std::string_view payment_id) const;
  // See the table above. `idempotency_key` is the header's value, already checked non-empty.
  boost::asio::awaitable<ServiceReply> CreateRefund(std::string body,
                                                    std::optional<std::string> idempotency_key);
  // 200 with the first refund stored with this key, or 404 not_found.
  ServiceReply FindRefund(std::string_view idempotency_key);
  // 200 with a JSON array of every refund, oldest first.
  ServiceReply ListRefunds();

 private:
  Ledger& ledger_;
  ProviderConfig config_;
  Clock clock_;
  FaultPlan faults_;
  int rate_limited_ = 0;  // new refunds refused with 429 so far
  std::set<std::string, std::less<>> in_flight_;  // keys inside steps 5-7
};

// The refund as the API shows it (201, 200, lookups and the list).
boost::json::object RefundJson(const Refund& refund);

}  // namespace reckon::samples::provider
