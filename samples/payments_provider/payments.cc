#include "samples/payments_provider/payments.h"

#include <algorithm>

namespace reckon::samples::provider {
namespace {

// splitmix64's finalizer: a well-mixed 64-bit value from any input.
std::uint64_t Mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// FNV-1a: stable across platforms and runs, unlike std::hash.
std::uint64_t Fnv1a(std::string_view text) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

}  // namespace

bool IsPaymentId(std::string_view payment_id) {
  constexpr std::string_view kPrefix = "pay-";
  if (!payment_id.starts_with(kPrefix)) return false;
  std::string_view digits = payment_id.substr(kPrefix.size());
  return !digits.empty() && digits.size() <= 32 &&
         std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<Payment> PaymentFor(std::uint64_t seed, std::string_view payment_id) {
  if (!IsPaymentId(payment_id)) return std::nullopt;
  constexpr std::int64_t kMin = 500;
  constexpr std::int64_t kMax = 25000;
  std::uint64_t hash = Mix(seed ^ Mix(Fnv1a(payment_id)));
  Payment payment;
  payment.payment_id = std::string(payment_id);
  payment.amount_cents = kMin + static_cast<std::int64_t>(hash % (kMax - kMin + 1));
  return payment;
}

boost::json::object PaymentJson(const Payment& payment) {
  return boost::json::object{{"payment_id", payment.payment_id},
                             {"amount_cents", payment.amount_cents},
                             {"currency", payment.currency},
                             {"status", payment.status}};
}

}  // namespace reckon::samples::provider
