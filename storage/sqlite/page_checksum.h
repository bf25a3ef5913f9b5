// PageChecksum: the 64-bit checksum a journal page carries in its last 8 bytes, the page's
// reserved bytes (docs/JOURNAL_FORMAT.md, "Page checksums"; written and verified by the
// checksum VFS, storage/sqlite/checksum_vfs.h).
//
// It detects damage, not forgery: whoever can write the file can recompute it. A change
// confined to one aligned 8-byte word of a page (every flipped bit, every changed byte) is
// always detected; any other change escapes with a probability of about 2^-64. An all-zero
// page never carries a valid checksum.
//
// Stateless functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace reckon::storage {

inline constexpr std::size_t kPageChecksumBytes = 8;

// The checksum of `bytes`, whose size must be a multiple of 8 (a page without its last 8
// bytes). Reads the bytes as little-endian words on every machine, so a file moves between
// machines unchanged.
std::uint64_t PageChecksum(std::span<const std::byte> bytes);

// Writes the checksum of the page's first size - 8 bytes into its last 8 (little-endian).
// `page`: 512 to 65536 bytes, a multiple of 8.
void SealPage(std::span<std::byte> page);

// True when the page's last 8 bytes hold the checksum of the rest.
bool PageIsSealed(std::span<const std::byte> page);

}  // namespace reckon::storage
