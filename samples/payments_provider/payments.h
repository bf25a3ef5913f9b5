// The fake provider's payments: not stored, but derived from (seed, payment id), so every
// provider started with the same seed agrees on every payment's amount. Pure functions;
// thread-safe.
#pragma once

#include <boost/json/object.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace reckon::samples::provider {

struct Payment {
  std::string payment_id;
  std::int64_t amount_cents = 0;  // 500..25000, so some payments are above 100.00 USD
  std::string currency = "usd";
  std::string status = "captured";
};

// True for ids of the form ^pay-[0-9]+$ (at most 32 digits).
bool IsPaymentId(std::string_view payment_id);

// The payment with this id, or nullopt if the id is not well formed (no such payment).
std::optional<Payment> PaymentFor(std::uint64_t seed, std::string_view payment_id);

// {"payment_id","amount_cents","currency","status"}.
boost::json::object PaymentJson(const Payment& payment);

}  // namespace reckon::samples::provider
