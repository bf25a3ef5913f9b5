// Damaging files on purpose, for tests of what the journal does with a broken disk.
#pragma once

#include <cstdint>
#include <string>

#include "reckon/base/error.h"

namespace reckon::testing {

// Inverts every bit of `length` bytes of the file at `path`, starting at the 4 KiB boundary
// nearest its middle (so a 4 KiB flip covers one whole SQLite page of 4 KiB pages). Returns
// the offset it flipped at. kFailedPrecondition if the file is smaller than 3 * `length`;
// kUnavailable on I/O errors.
Result<std::uint64_t> FlipMiddle(const std::string& path, std::uint64_t length = 4096);

}  // namespace reckon::testing
