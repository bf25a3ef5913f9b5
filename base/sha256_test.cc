#include "reckon/base/sha256.h"

#include <gtest/gtest.h>
#include <openssl/sha.h>

#include <random>
#include <string>

#include "reckon/base/intent_hash.h"

namespace reckon {
namespace {

std::string Hex(const Sha256Digest& digest) { return ToHex(digest); }

std::string HashWith(Sha256Hasher hasher, std::string_view bytes) {
  hasher.Update(bytes);
  return Hex(hasher.Finish());
}

// FIPS 180-4 examples (NIST's "SHA256.pdf" and the CAVS short/long message vectors).
struct Vector {
  std::string input;
  const char* digest;
};

std::vector<Vector> StandardVectors() {
  return {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqr"
       "lmnopqrsmnopqrstnopqrstu",
       "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
      {std::string(1000000, 'a'), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
  };
}

TEST(Sha256Test, StandardVectorsOnEveryPathThisCpuHas) {
  for (const Vector& v : StandardVectors()) {
    EXPECT_EQ(Hex(Sha256(v.input)), v.digest) << v.input.substr(0, 40);
    EXPECT_EQ(HashWith(Sha256Hasher::Portable(), v.input), v.digest) << v.input.substr(0, 40);
  }
  std::printf("SHA-NI %s on this CPU\n", Sha256UsesShaNi() ? "used" : "not available");
}

// Every length across the padding boundaries (55, 56, 63, 64 bytes...) and random contents,
// in one piece and fed in random slices, against OpenSSL's SHA-256.
TEST(Sha256Test, AgreesWithOpenSslAtEveryLengthAndSlicing) {
  std::mt19937 random(20261203);
  for (std::size_t length = 0; length < 600; ++length) {
    std::string bytes(length, '\0');
    for (char& c : bytes) c = static_cast<char>(random());
    unsigned char expected[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), expected);
    Sha256Digest want;
    std::copy(std::begin(expected), std::end(expected), want.begin());

    EXPECT_EQ(Sha256(bytes), want) << "length " << length;
    for (Sha256Hasher hasher : {Sha256Hasher(), Sha256Hasher::Portable()}) {
      std::size_t at = 0;
      while (at < bytes.size()) {
        const std::size_t slice = std::min<std::size_t>(random() % 130, bytes.size() - at);
        hasher.Update(std::string_view(bytes).substr(at, slice));
        at += slice;
      }
      EXPECT_EQ(hasher.Finish(), want) << "length " << length << " in slices";
    }
  }
}

}  // namespace
}  // namespace reckon
