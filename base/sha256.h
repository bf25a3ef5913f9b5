// SHA-256 (FIPS 180-4), Reckon's own, so that the layers under the SDK link no crypto library:
// operation ids, intent hashes and token hashes are SHA-256, and a program that only writes
// workflows should not link OpenSSL for them (docs/decisions/57-folders-are-layers.md).
//
// On an x86-64 CPU with the SHA extensions (SHA-NI) the compression runs on them, chosen once
// at run time; elsewhere a portable implementation. Both give the same digest; the test checks
// them against the standard's vectors and against each other.
//
// Stateless functions; Sha256Hasher is a value with no sharing (one per thread of use).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace reckon {

using Sha256Digest = std::array<std::uint8_t, 32>;

// An incremental SHA-256: Update any number of times, then Finish once.
class Sha256Hasher {
 public:
  Sha256Hasher();

  void Update(std::string_view bytes);
  // The digest of everything given to Update. The hasher must not be used afterwards.
  Sha256Digest Finish();

  // For tests: force the portable compression even where SHA-NI exists.
  static Sha256Hasher Portable();

 private:
  explicit Sha256Hasher(bool use_sha_ni);
  void Compress(const std::uint8_t* blocks, std::size_t count);

  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
  bool use_sha_ni_;
};

// The digest of `bytes` in one call.
Sha256Digest Sha256(std::string_view bytes);

// True when this CPU's SHA extensions are used (for the test and the benchmark to say so).
bool Sha256UsesShaNi();

}  // namespace reckon
