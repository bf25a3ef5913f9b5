#include "reckon/base/base64.h"

#include <gtest/gtest.h>

namespace reckon {
namespace {

TEST(Base64Test, EncodesTheRfc4648Vectors) {
  EXPECT_EQ(EncodeBase64(""), "");
  EXPECT_EQ(EncodeBase64("f"), "Zg==");
  EXPECT_EQ(EncodeBase64("fo"), "Zm8=");
  EXPECT_EQ(EncodeBase64("foo"), "Zm9v");
  EXPECT_EQ(EncodeBase64("foob"), "Zm9vYg==");
  EXPECT_EQ(EncodeBase64("fooba"), "Zm9vYmE=");
  EXPECT_EQ(EncodeBase64("foobar"), "Zm9vYmFy");
}

TEST(Base64Test, RoundTripsEveryByteValue) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  for (std::size_t length = 0; length <= bytes.size(); length += 37) {
    const std::string cut = bytes.substr(0, length);
    auto decoded = DecodeBase64(EncodeBase64(cut));
    ASSERT_TRUE(decoded) << decoded.error().message();
    EXPECT_EQ(decoded.value(), cut);
  }
}

TEST(Base64Test, RefusesWhatIsNotOneCanonicalEncoding) {
  for (const char* bad : {"Zm9", "Zm9v\n", "Zm 9v", "Zm9*", "Z===", "====", "Zm=v", "Zh=="}) {
    auto decoded = DecodeBase64(bad);
    ASSERT_FALSE(decoded) << bad;
    EXPECT_EQ(decoded.error().code(), Errc::kInvalidArgument);
  }
  EXPECT_NE(DecodeBase64("Zm9*").error().message().find("'*' at offset 3"), std::string::npos);
}

}  // namespace
}  // namespace reckon
