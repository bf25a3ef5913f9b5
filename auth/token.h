// API tokens: 256 random bits, written "rk1_" followed by 64 lowercase hex digits. A token is
// shown once, when created; the server keeps only its SHA-256 (TokenHash), so a copied
// database grants nothing. Tokens are high-entropy, so a fast hash suffices (no key
// stretching is needed against guessing).
//
// Plain functions; GenerateToken reads the kernel's random source.
#pragma once

#include <string>
#include <string_view>

#include "reckon/base/error.h"

namespace reckon::auth {

// A new token from getrandom(2). Errc::kUnavailable if the random source fails.
Result<std::string> GenerateToken();

// True for text shaped like a token ("rk1_" + 64 lowercase hex digits).
bool LooksLikeToken(std::string_view text);

// Lowercase hex SHA-256 of the token's text.
std::string TokenHash(std::string_view token);

// The token in `text` (a token file's content): surrounding whitespace removed. Errc::
// kInvalidArgument naming `source` when what is left is not shaped like a token (the message
// never repeats the text).
Result<std::string> ParseToken(std::string_view text, std::string_view source);

}  // namespace reckon::auth
