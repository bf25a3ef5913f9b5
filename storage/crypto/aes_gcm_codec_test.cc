#include "reckon/storage/crypto/aes_gcm_codec.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "tests/support/temp_dir.h"

namespace reckon::storage {
namespace {

PayloadKey Key(std::string id, unsigned char fill) {
  std::array<unsigned char, 32> bytes;
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(fill + i);
  return PayloadKey(std::move(id), bytes);
}

// A codec over keys (id, fill byte) in file order; the last one seals.
std::unique_ptr<AesGcmCodec> Codec(std::vector<std::pair<std::string, unsigned char>> keys) {
  PayloadKeySet set;
  for (auto& [id, fill] : keys) set.keys.push_back(Key(id, fill));
  set.sealing = set.keys.size() - 1;
  set.source = "test.keys";
  auto codec = AesGcmCodec::Create(std::move(set));
  EXPECT_TRUE(codec) << codec.error().ToString();
  return std::move(codec).value();
}

const std::string kText = R"({"customer":"Ada Lovelace","amount_cents":4200})";
const std::string kContext = "reckon.sealed.v1 wf-1 r1 seq 7";

TEST(AesGcmCodecTest, RoundTripsUnderTheSealingKey) {
  auto codec = Codec({{"k1", 1}});
  for (const std::string& text : {kText, std::string(), std::string(70000, 'x')}) {
    auto sealed = codec->Seal(text, kContext);
    ASSERT_TRUE(sealed) << sealed.error().ToString();
    EXPECT_EQ(sealed.value().key_id, "k1");
    EXPECT_EQ(sealed.value().box.size(), 12 + text.size() + 16);
    if (!text.empty()) {
      EXPECT_EQ(sealed.value().box.find(text), std::string::npos);
    }
    auto opened = codec->Open("k1", sealed.value().box, kContext);
    ASSERT_TRUE(opened) << opened.error().ToString();
    EXPECT_EQ(opened.value(), text);
  }
}

TEST(AesGcmCodecTest, SealsTheSameTextDifferentlyEachTime) {
  auto codec = Codec({{"k1", 1}});
  auto a = codec->Seal(kText, kContext);
  auto b = codec->Seal(kText, kContext);
  ASSERT_TRUE(a && b);
  EXPECT_NE(a.value().box.substr(0, 12), b.value().box.substr(0, 12));  // fresh nonces
  EXPECT_NE(a.value().box, b.value().box);
}

TEST(AesGcmCodecTest, NoncesStayDistinctAcrossPoolRefillsAndThreads) {
  auto codec = Codec({{"k1", 1}});
  std::mutex mutex;
  std::set<std::string> nonces;
  int failures = 0;
  auto work = [&](int thread) {
    for (int i = 0; i < 300; ++i) {
      const std::string text = kText + std::to_string(thread * 1000 + i);
      auto sealed = codec->Seal(text, kContext);
      auto opened = sealed ? codec->Open("k1", sealed.value().box, kContext)
                           : Result<std::string>(sealed.error());
      std::lock_guard<std::mutex> lock(mutex);
      if (!opened || opened.value() != text) ++failures;
      if (sealed) nonces.insert(sealed.value().box.substr(0, 12));
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back(work, t);
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(nonces.size(), 1200u);
}

TEST(AesGcmCodecTest, RefusesEveryAlteredByteAndAnotherContext) {
  auto codec = Codec({{"k1", 1}});
  auto sealed = codec->Seal(kText, kContext);
  ASSERT_TRUE(sealed);
  const std::string& box = sealed.value().box;
  // Nonce, ciphertext and tag: flipping any bit of any byte is refused.
  for (std::size_t i = 0; i < box.size(); ++i) {
    std::string altered = box;
    altered[i] = static_cast<char>(altered[i] ^ 0x01);
    auto opened = codec->Open("k1", altered, kContext);
    ASSERT_FALSE(opened) << "byte " << i;
    EXPECT_EQ(opened.error().code(), Errc::kCorruption);
    EXPECT_NE(opened.error().message().find("does not authenticate"), std::string::npos);
  }
  auto truncated = codec->Open("k1", box.substr(0, box.size() - 1), kContext);
  ASSERT_FALSE(truncated);
  EXPECT_EQ(truncated.error().code(), Errc::kCorruption);
  auto too_short = codec->Open("k1", box.substr(0, 20), kContext);
  ASSERT_FALSE(too_short);
  EXPECT_EQ(too_short.error().code(), Errc::kCorruption);
  // The same box at another place (another run, seq or type) does not open.
  auto elsewhere = codec->Open("k1", box, "reckon.sealed.v1 wf-1 r1 seq 8");
  ASSERT_FALSE(elsewhere);
  EXPECT_EQ(elsewhere.error().code(), Errc::kCorruption);
}

TEST(AesGcmCodecTest, AMissingKeyIsNamedAndAWrongKeyUnderTheSameIdIsRefused) {
  auto old_codec = Codec({{"k1", 1}});
  auto sealed = old_codec->Seal(kText, kContext);
  ASSERT_TRUE(sealed);

  auto without_k1 = Codec({{"k2", 2}});
  auto missing = without_k1->Open("k1", sealed.value().box, kContext);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), Errc::kFailedPrecondition);
  EXPECT_NE(missing.error().message().find("payload key 'k1'"), std::string::npos);
  EXPECT_NE(missing.error().message().find("test.keys"), std::string::npos);
  EXPECT_NE(missing.error().message().find("it holds k2"), std::string::npos);

  auto other_bytes = Codec({{"k1", 9}});
  auto wrong = other_bytes->Open("k1", sealed.value().box, kContext);
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().code(), Errc::kCorruption);
  EXPECT_NE(wrong.error().message().find("different key under the id 'k1'"), std::string::npos);
}

TEST(AesGcmCodecTest, RotationSealsWithTheNewKeyAndStillOpensTheOld) {
  auto before = Codec({{"k1", 1}});
  auto old_box = before->Seal(kText, kContext);
  ASSERT_TRUE(old_box);

  auto after = Codec({{"k1", 1}, {"k2", 2}});
  EXPECT_EQ(after->sealing_key_id(), "k2");
  auto old_opened = after->Open(old_box.value().key_id, old_box.value().box, kContext);
  ASSERT_TRUE(old_opened) << old_opened.error().ToString();
  EXPECT_EQ(old_opened.value(), kText);

  auto new_box = after->Seal(kText, kContext);
  ASSERT_TRUE(new_box);
  EXPECT_EQ(new_box.value().key_id, "k2");
  // A process still on the old file names the key it lacks.
  auto stale = before->Open("k2", new_box.value().box, kContext);
  ASSERT_FALSE(stale);
  EXPECT_NE(stale.error().message().find("'k2'"), std::string::npos);
}

TEST(AesGcmCodecTest, OpensAKeyFile) {
  testing::TempDir dir;
  const std::string path = dir.File("payload.keys");
  {
    std::ofstream out(path);
    out << "k1 " << std::string(64, 'a') << " seal\n"
        << "k2 " << std::string(64, 'b') << "\n";
  }
  ::chmod(path.c_str(), 0600);
  auto codec = OpenPayloadKeyFile(path);
  ASSERT_TRUE(codec) << codec.error().ToString();
  EXPECT_EQ(codec.value()->sealing_key_id(), "k1");
  auto sealed = codec.value()->Seal(kText, kContext);
  ASSERT_TRUE(sealed);
  auto opened = codec.value()->Open("k1", sealed.value().box, kContext);
  ASSERT_TRUE(opened);
  EXPECT_EQ(opened.value(), kText);

  ::chmod(path.c_str(), 0640);
  auto refused = OpenPayloadKeyFile(path);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::kFailedPrecondition);
}

}  // namespace
}  // namespace reckon::storage
