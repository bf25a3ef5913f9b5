// Base64 (RFC 4648, section 4: the standard alphabet, with '=' padding) for bytes carried in
// JSON text, such as the event payloads of a history file (storage/history_file.h).
//
// DecodeBase64 is strict: it refuses characters outside the alphabet (whitespace included), a
// length that is not a multiple of 4, padding anywhere but at the end, and non-zero bits in
// the unused part of the last character, so every byte string has exactly one encoding.
// Stateless and thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "reckon/base/error.h"

namespace reckon {

std::string EncodeBase64(std::string_view bytes);

// Errc::kInvalidArgument naming the offset of the first bad character (or the bad length).
Result<std::string> DecodeBase64(std::string_view text);

}  // namespace reckon
