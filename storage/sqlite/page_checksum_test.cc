// The page checksum's promises (storage/sqlite/page_checksum.h): every single-bit flip and
// every changed byte of a page is caught, a zeroed page is never valid, and the value stays
// the one journals on disk hold (a change of algorithm is a change of file format).
#include "reckon/storage/sqlite/page_checksum.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace reckon::storage {
namespace {

std::vector<std::byte> RandomPage(std::size_t size, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::byte> page(size);
  for (std::byte& b : page) b = static_cast<std::byte>(rng());
  return page;
}

TEST(PageChecksumTest, ASealedPageVerifies) {
  for (std::size_t size : {512u, 4096u, 65536u}) {
    std::vector<std::byte> page = RandomPage(size, size);
    EXPECT_FALSE(PageIsSealed(page));
    SealPage(page);
    EXPECT_TRUE(PageIsSealed(page)) << size;
  }
}

TEST(PageChecksumTest, EveryFlippedBitIsCaught) {
  std::vector<std::byte> page = RandomPage(4096, 7);
  SealPage(page);
  for (std::size_t bit = 0; bit < page.size() * 8; ++bit) {
    page[bit / 8] ^= static_cast<std::byte>(1u << (bit % 8));
    ASSERT_FALSE(PageIsSealed(page)) << "bit " << bit;
    page[bit / 8] ^= static_cast<std::byte>(1u << (bit % 8));
  }
  EXPECT_TRUE(PageIsSealed(page));
}

TEST(PageChecksumTest, EveryValueOfEveryByteIsCaught) {
  std::vector<std::byte> page = RandomPage(4096, 8);
  SealPage(page);
  for (std::size_t at = 0; at < page.size(); at += 97) {
    const std::byte kept = page[at];
    for (int value = 0; value < 256; ++value) {
      page[at] = static_cast<std::byte>(value);
      ASSERT_EQ(PageIsSealed(page), page[at] == kept) << "byte " << at << " = " << value;
    }
    page[at] = kept;
  }
}

TEST(PageChecksumTest, TwoSwappedWordsAndZeroedPagesAreCaught) {
  std::vector<std::byte> page = RandomPage(4096, 9);
  SealPage(page);
  std::vector<std::byte> swapped = page;
  std::swap_ranges(swapped.begin() + 64, swapped.begin() + 72, swapped.begin() + 1024);
  EXPECT_FALSE(PageIsSealed(swapped));
  std::vector<std::byte> zeros(4096);
  EXPECT_FALSE(PageIsSealed(zeros));
}

// Journals on disk hold this value: changing the function changes the file format. (Also
// computed from docs/JOURNAL_FORMAT.md's description alone, to check that it says enough.)
TEST(PageChecksumTest, TheValueIsTheFormats) {
  std::vector<std::byte> page(4088);
  for (std::size_t i = 0; i < page.size(); ++i) page[i] = static_cast<std::byte>(i * 31 + 7);
  EXPECT_EQ(PageChecksum(page), 0xdf0df1bc1bd7d8ffull);
}

}  // namespace
}  // namespace reckon::storage
