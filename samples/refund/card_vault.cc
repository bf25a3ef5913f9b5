#include "samples/refund/card_vault.h"

#include <functional>

namespace reckon::refund {

std::string CardVault::TokenFor(std::string_view payment_id) const {
  const std::size_t h = std::hash<std::string_view>{}(payment_id) ^ (seed_ * 0x9e3779b97f4a7c15ULL);
  return "tok_secret_" + std::to_string(h % 1000000007ULL);
}

}  // namespace reckon::refund
