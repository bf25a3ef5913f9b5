// CardVault: the refund sample's stand-in for a secrets vault. Secrets enter at the edge: the
// send_refund tool asks the vault for the card token when it builds the provider request, so
// the token never passes through workflow code, workflow inputs or tool outputs, all of which
// the journal records. Deterministic per seed, immutable, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace reckon::refund {

class CardVault {
 public:
  explicit CardVault(std::uint64_t seed) : seed_(seed) {}
  // The (fake) card token of a payment.
  std::string TokenFor(std::string_view payment_id) const;

 private:
  std::uint64_t seed_;
};

}  // namespace reckon::refund
