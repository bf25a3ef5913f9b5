// WalFormat: the layout of SQLite's write-ahead log (the journal's "-wal" file), as SQLite's
// file format documentation describes it (https://www.sqlite.org/fileformat2.html, "The
// Write-Ahead Log"), for the checksum VFS (storage/sqlite/checksum_vfs.h), which has to keep
// SQLite's frame checksums right after it seals a page, and for the page scan of
// `reckon admin check` (storage/sqlite/page_scan.h).
//
//   file:   a 32-byte header, then frames
//   header: magic (0x377f0682, or 0x377f0683 when the checksums read big-endian words),
//           format version, page size, checkpoint sequence, salt-1, salt-2, checksum-1,
//           checksum-2 (of the first 24 bytes); all big-endian 32-bit integers
//   frame:  a 24-byte header (page number; the database size in pages for the frame that
//           commits a transaction, else 0; salt-1; salt-2; checksum-1; checksum-2), then the
//           page. A frame's checksum continues the previous frame's (frame 1: the header's)
//           over the frame header's first 8 bytes and the page. SQLite's recovery takes the
//           frames up to the last commit frame before the first whose salts or checksum do
//           not match.
//
// Stateless functions and value types; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace reckon::storage {

inline constexpr std::int64_t kWalHeaderBytes = 32;
inline constexpr std::int64_t kWalFrameHeaderBytes = 24;

// SQLite's two 32-bit running sums.
struct WalChecksum {
  std::uint32_t s0 = 0;
  std::uint32_t s1 = 0;
  bool operator==(const WalChecksum&) const = default;
};

struct WalHeader {
  std::uint32_t page_size = 0;
  std::uint32_t salt1 = 0;
  std::uint32_t salt2 = 0;
  bool big_endian_sums = false;  // the words the checksums add up are big-endian
  WalChecksum checksum;          // of the header's first 24 bytes
};

// The header in `bytes` (at least 32), or nullopt when the magic or the page size is not
// SQLite's, or its checksum does not match.
std::optional<WalHeader> ParseWalHeader(std::span<const std::byte> bytes);

// Continues `sum` over `bytes` (a multiple of 8), SQLite's way.
WalChecksum ContinueWalChecksum(WalChecksum sum, std::span<const std::byte> bytes,
                                bool big_endian_sums);

// Reads and writes the big-endian integers of the formats above.
std::uint32_t ReadBigEndian32(const std::byte* p);
void WriteBigEndian32(std::uint32_t value, std::byte* p);

// Where frame `frame` (1-based) starts, for pages of `page_size` bytes.
inline std::int64_t WalFrameOffset(std::int64_t frame, std::int64_t page_size) {
  return kWalHeaderBytes + (frame - 1) * (page_size + kWalFrameHeaderBytes);
}

// The frame whose page starts at `offset`, or 0 when no page of `page_size` starts there.
std::int64_t WalFrameOfPage(std::int64_t offset, std::int64_t page_size);
// The frame whose header starts at `offset`, or 0.
std::int64_t WalFrameOfHeader(std::int64_t offset, std::int64_t page_size);

// True for a page size SQLite allows: a power of two from 512 to 65536.
bool IsPageSize(std::int64_t bytes);

}  // namespace reckon::storage
