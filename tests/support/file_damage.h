// Damaging files on purpose, for tests of what the journal does with a broken disk.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "reckon/base/error.h"

namespace reckon::testing {

// Inverts every bit of `length` bytes of the file at `path`, starting at the 4 KiB boundary
// nearest its middle (so a 4 KiB flip covers one whole SQLite page of 4 KiB pages). Returns
// the offset it flipped at. kFailedPrecondition if the file is smaller than 3 * `length`;
// kUnavailable on I/O errors.
Result<std::uint64_t> FlipMiddle(const std::string& path, std::uint64_t length = 4096);

// Changes one byte inside a row: finds the first occurrence of `needle` (a value the test wrote)
// that lies wholly in [from, to) of the file at `path` and flips the low bit of its middle
// byte, so that the page's structure (cell pointers, headers, lengths) stays as it was.
// Returns the offset it changed. kNotFound when there is none; kUnavailable on I/O errors.
Result<std::uint64_t> FlipByteInside(const std::string& path, std::string_view needle,
                                     std::uint64_t from = 0,
                                     std::uint64_t to = UINT64_MAX);

}  // namespace reckon::testing
