#include "reckon/storage/sqlite/wal_format.h"

#include <cstring>

namespace reckon::storage {
namespace {

constexpr std::uint32_t kWalMagic = 0x377f0682;

std::uint32_t ReadLittleEndian32(const std::byte* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

}  // namespace

std::uint32_t ReadBigEndian32(const std::byte* p) {
  return static_cast<std::uint32_t>(p[0]) << 24 | static_cast<std::uint32_t>(p[1]) << 16 |
         static_cast<std::uint32_t>(p[2]) << 8 | static_cast<std::uint32_t>(p[3]);
}

void WriteBigEndian32(std::uint32_t value, std::byte* p) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::byte>(value >> (24 - 8 * i));
}

bool IsPageSize(std::int64_t bytes) {
  return bytes >= 512 && bytes <= 65536 && (bytes & (bytes - 1)) == 0;
}

WalChecksum ContinueWalChecksum(WalChecksum sum, std::span<const std::byte> bytes,
                                bool big_endian_sums) {
  const std::byte* p = bytes.data();
  const std::byte* end = p + bytes.size() / 8 * 8;
  if (big_endian_sums) {
    for (; p < end; p += 8) {
      sum.s0 += ReadBigEndian32(p) + sum.s1;
      sum.s1 += ReadBigEndian32(p + 4) + sum.s0;
    }
  } else {
    for (; p < end; p += 8) {
      sum.s0 += ReadLittleEndian32(p) + sum.s1;
      sum.s1 += ReadLittleEndian32(p + 4) + sum.s0;
    }
  }
  return sum;
}

std::optional<WalHeader> ParseWalHeader(std::span<const std::byte> bytes) {
  if (bytes.size() < static_cast<std::size_t>(kWalHeaderBytes)) return std::nullopt;
  const std::uint32_t magic = ReadBigEndian32(bytes.data());
  if ((magic & ~1u) != kWalMagic) return std::nullopt;
  WalHeader header;
  header.big_endian_sums = (magic & 1u) != 0;
  header.page_size = ReadBigEndian32(bytes.data() + 8);
  if (!IsPageSize(header.page_size)) return std::nullopt;
  header.salt1 = ReadBigEndian32(bytes.data() + 16);
  header.salt2 = ReadBigEndian32(bytes.data() + 20);
  header.checksum = {ReadBigEndian32(bytes.data() + 24), ReadBigEndian32(bytes.data() + 28)};
  if (ContinueWalChecksum({}, bytes.first(24), header.big_endian_sums) != header.checksum) {
    return std::nullopt;
  }
  return header;
}

std::int64_t WalFrameOfPage(std::int64_t offset, std::int64_t page_size) {
  return WalFrameOfHeader(offset - kWalFrameHeaderBytes, page_size);
}

std::int64_t WalFrameOfHeader(std::int64_t offset, std::int64_t page_size) {
  const std::int64_t from_first = offset - kWalHeaderBytes;
  if (from_first < 0 || from_first % (page_size + kWalFrameHeaderBytes) != 0) return 0;
  return from_first / (page_size + kWalFrameHeaderBytes) + 1;
}

}  // namespace reckon::storage
