// Names of enum values at the boundaries (journal, SQL columns, wire, human output).
//
// An enum whose values are numbered 0..N-1 in declaration order keeps its names in one table
// beside it; its Name and Parse functions are built from that table with these two helpers,
// so a name and its parse can never disagree. Parse refuses an unknown name with
// Errc::kInvalidArgument naming the value and the accepted names; a caller reading stored data
// re-codes that error (an unknown name in a journal is corruption, never mapped to a default).
// Stateless and thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include "reckon/base/error.h"

namespace reckon {

template <class E, std::size_t N>
constexpr std::string_view EnumName(const std::array<std::string_view, N>& names, E value) {
  return names.at(static_cast<std::size_t>(value));  // out of range: a bug, it throws
}

// `kind` names the vocabulary in the error: "unknown run status 'x' (use running, ... or y)".
template <class E, std::size_t N>
Result<E> ParseEnum(const std::array<std::string_view, N>& names, std::string_view kind,
                    std::string_view name) {
  static_assert(N > 1);
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<E>(i);
  }
  std::string accepted;
  for (std::size_t i = 0; i < N; ++i) {
    accepted += i == 0 ? "" : (i + 1 == N ? " or " : ", ");
    accepted += names[i];
  }
  return Err(Errc::kInvalidArgument, "unknown " + std::string(kind) + " '" + std::string(name) +
                                         "' (use " + accepted + ")");
}

// A name read back from stored data (a journal event, a SQL column) that Parse refused: the
// journal is damaged or was written by a newer release, so the error is Errc::kCorruption,
// prefixed with `where` (e.g. "OperationCommitted.source").
template <class E>
Result<E> FromStored(Result<E> parsed, std::string_view where) {
  if (parsed) return parsed;
  return Err(Errc::kCorruption, std::string(where) + ": " + parsed.error().message() +
                                    "; the journal is damaged or was written by a newer "
                                    "release of reckon");
}

}  // namespace reckon
