// Intent hashes: SHA-256 over the RFC 8785 canonical JSON of a validated tool input with the
// contract's secret fields removed. Two inputs that mean the same thing (member order, number
// spelling) get the same hash; a secret never influences it, so the hash can be logged.
//
// A secret field is named by a dotted path from the input's root ("card.number"); a path that
// is absent is ignored. Paths do not descend into arrays. Stateless and thread-safe.
#pragma once

#include <boost/json/value.hpp>

#include <span>
#include <string>
#include <string_view>

#include "reckon/base/error.h"
#include "reckon/base/sha256.h"

namespace reckon {

std::string ToHex(const Sha256Digest& digest);  // 64 lowercase hex characters

// Returns a copy of `input` with every secret field removed.
boost::json::value RemoveSecretFields(const boost::json::value& input,
                                      std::span<const std::string> secret_fields);

// The intent hash of `input` as 64 lowercase hex characters.
Result<std::string> IntentHash(const boost::json::value& input,
                               std::span<const std::string> secret_fields);

}  // namespace reckon
