#include "reckon/storage/crypto/payload_keys.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "tests/support/temp_dir.h"

namespace reckon::storage {
namespace {

const std::string kHex1 = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
const std::string kHex2 = "F0E1D2C3B4A5968778695A4B3C2D1E0FF0E1D2C3B4A5968778695A4B3C2D1E0F";

TEST(PayloadKeysTest, TheLastKeySealsUnlessOneIsMarked) {
  auto keys = ParsePayloadKeys("# keys\n\nk1 " + kHex1 + "\n  k2\t" + kHex2 + "  # newest\n",
                               "keys.txt");
  ASSERT_TRUE(keys) << keys.error().ToString();
  ASSERT_EQ(keys.value().keys.size(), 2u);
  EXPECT_EQ(keys.value().keys[0].id, "k1");
  EXPECT_EQ(keys.value().keys[0].bytes[1], 0x01);
  EXPECT_EQ(keys.value().keys[1].bytes[0], 0xf0);
  EXPECT_EQ(keys.value().sealing, 1u);
  EXPECT_EQ(keys.value().source, "keys.txt");

  auto marked = ParsePayloadKeys("k1 " + kHex1 + " seal\r\nk2 " + kHex2 + "\r\n", "keys.txt");
  ASSERT_TRUE(marked) << marked.error().ToString();
  EXPECT_EQ(marked.value().sealing, 0u);
}

TEST(PayloadKeysTest, RefusesMalformedFilesNamingTheLineButNeverItsContent) {
  struct Case {
    std::string text;
    std::string says;
  };
  const Case cases[] = {
      {"k1 " + kHex1.substr(2) + "\n", "line 1: the key must be 64 hexadecimal digits"},
      {"# c\nk1 " + kHex1.substr(0, 62) + "zz\n", "line 2: the key must be 64"},
      {"k1\n", "line 1: expected `ID HEX`"},
      {"k1 " + kHex1 + " sealed\n", "line 1: expected `ID HEX`"},
      {"k/1 " + kHex1 + "\n", "line 1: the key id must be 1 to 32 characters"},
      {std::string(33, 'k') + " " + kHex1 + "\n", "line 1: the key id must be"},
      {"k1 " + kHex1 + "\nk1 " + kHex2 + "\n", "line 2: key id 'k1' is already used"},
      {"k1 " + kHex1 + " seal\nk2 " + kHex2 + " seal\n", "line 2: a second key is marked"},
      {"# nothing\n\n", "holds no key"},
  };
  for (const Case& c : cases) {
    auto keys = ParsePayloadKeys(c.text, "keys.txt");
    ASSERT_FALSE(keys) << c.text;
    EXPECT_EQ(keys.error().code(), Errc::kInvalidArgument);
    EXPECT_NE(keys.error().message().find(c.says), std::string::npos) << keys.error().message();
    EXPECT_NE(keys.error().message().find("keys.txt"), std::string::npos);
    // A malformed line may still hold most of a key: the message never repeats it.
    EXPECT_EQ(keys.error().message().find(kHex1.substr(4, 20)), std::string::npos);
    EXPECT_EQ(keys.error().message().find(kHex2.substr(4, 20)), std::string::npos);
  }
}

TEST(PayloadKeysTest, ReadsOnlyAFileThatGroupAndOthersCannotRead) {
  testing::TempDir dir;
  const std::string path = dir.File("payload.keys");
  std::ofstream(path) << "k1 " << kHex1 << "\n";

  ::chmod(path.c_str(), 0644);
  auto open = ReadPayloadKeyFile(path);
  ASSERT_FALSE(open);
  EXPECT_EQ(open.error().code(), Errc::kFailedPrecondition);
  EXPECT_NE(open.error().message().find("mode 0644"), std::string::npos);
  EXPECT_NE(open.error().message().find("chmod 600"), std::string::npos);

  ::chmod(path.c_str(), 0600);
  auto keys = ReadPayloadKeyFile(path);
  ASSERT_TRUE(keys) << keys.error().ToString();
  EXPECT_EQ(keys.value().keys.front().id, "k1");
  EXPECT_EQ(keys.value().source, path);

  auto missing = ReadPayloadKeyFile(dir.File("absent.keys"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), Errc::kNotFound);

  auto directory = ReadPayloadKeyFile(dir.path().string());
  ASSERT_FALSE(directory);
  EXPECT_EQ(directory.error().code(), Errc::kFailedPrecondition);
}

TEST(PayloadKeysTest, KeyIds) {
  EXPECT_TRUE(IsValidPayloadKeyId("k2025-07.b_1"));
  EXPECT_TRUE(IsValidPayloadKeyId(std::string(32, 'a')));
  EXPECT_FALSE(IsValidPayloadKeyId(""));
  EXPECT_FALSE(IsValidPayloadKeyId(std::string(33, 'a')));
  EXPECT_FALSE(IsValidPayloadKeyId("k 1"));
  EXPECT_FALSE(IsValidPayloadKeyId("k\xc3\xa9"));
}

}  // namespace
}  // namespace reckon::storage
