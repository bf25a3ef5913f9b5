#include "reckon/storage/testing/power_loss_file.h"

#include <gtest/gtest.h>

#include <set>

namespace reckon::storage {
namespace {

using Cut = PowerLossFile::Cut;

TEST(PowerLossFileTest, SyncedBytesSurviveEveryCut) {
  PowerLossFile file(std::nullopt);
  file.Create();
  file.Write(0, std::string(1024, 'a'));
  file.Sync();
  file.Write(512, std::string(1024, 'b'));
  std::mt19937_64 rng(1);
  for (Cut cut : {Cut::kDropAll, Cut::kPrefixTorn, Cut::kSubsetTorn}) {
    for (int i = 0; i < 50; ++i) {
      auto image = file.ImageAfterCut(cut, rng);
      ASSERT_TRUE(image);
      EXPECT_EQ(image->substr(0, 512), std::string(512, 'a'));
    }
  }
  EXPECT_EQ(*file.ImageAfterCut(Cut::kDropAll, rng), std::string(1024, 'a'));
  EXPECT_EQ(*file.Live(), std::string(512, 'a') + std::string(1024, 'b'));
}

// In-order cuts keep whole writes, then a sector-aligned prefix of the next one, old bytes
// after it: never a later write without the earlier ones.
TEST(PowerLossFileTest, PrefixCutsTearAtSectorBoundaries) {
  PowerLossFile file(std::string(2048, '.'));
  file.Write(100, std::string(1000, 'a'));   // sectors 0..2
  file.Write(1500, std::string(300, 'b'));  // sectors 2..3
  std::mt19937_64 rng(2);
  std::set<std::string> images;
  for (int i = 0; i < 400; ++i) images.insert(*file.ImageAfterCut(Cut::kPrefixTorn, rng));
  std::set<std::string> expected;
  auto with = [](int a_end, int b_end) {
    std::string s(2048, '.');
    for (int i = 100; i < a_end; ++i) s[i] = 'a';
    for (int i = 1500; i < b_end; ++i) s[i] = 'b';
    return s;
  };
  for (int a_end : {100, 512, 1024, 1100}) expected.insert(with(a_end, 1500));
  for (int b_end : {1536, 1800}) expected.insert(with(1100, b_end));
  EXPECT_EQ(images, expected);
}

TEST(PowerLossFileTest, UnsyncedCreationAndDeletionMayBeUndone) {
  std::mt19937_64 rng(3);
  PowerLossFile created(std::nullopt);
  created.Create();
  created.Write(0, "x");
  EXPECT_FALSE(created.ImageAfterCut(Cut::kDropAll, rng));
  created.Sync();
  EXPECT_EQ(*created.ImageAfterCut(Cut::kDropAll, rng), "x");

  PowerLossFile deleted(std::string("kept"));
  deleted.Delete(/*dir_synced=*/false);
  EXPECT_FALSE(deleted.Exists());
  EXPECT_EQ(*deleted.ImageAfterCut(Cut::kDropAll, rng), "kept");
  deleted.Delete(/*dir_synced=*/true);
  EXPECT_FALSE(deleted.ImageAfterCut(Cut::kDropAll, rng));
}

// A directory sync commits this file's creation and deletion, not its writes.
TEST(PowerLossFileTest, DirectorySyncCommitsCreationAndDeletionOnly) {
  std::mt19937_64 rng(5);
  PowerLossFile file(std::nullopt);
  file.Create();
  file.Write(0, "data");
  file.SyncMetadata();
  EXPECT_EQ(*file.ImageAfterCut(Cut::kDropAll, rng), "");
  EXPECT_EQ(*file.ImageAfterCut(Cut::kKeepAll, rng), "data");
  file.Sync();
  file.Delete(/*dir_synced=*/false);
  file.Create();
  file.Write(0, "new");
  file.SyncMetadata();  // the old file is gone, the new one exists, empty until its sync
  EXPECT_EQ(*file.ImageAfterCut(Cut::kDropAll, rng), "");
  EXPECT_EQ(*file.ImageAfterCut(Cut::kKeepAll, rng), "new");
}

TEST(PowerLossFileTest, SubsetCutsOnlyChangeWrittenBytes) {
  PowerLossFile file(std::string(4096, '.'));
  file.Write(0, std::string(700, 'a'));
  file.Write(2000, std::string(1500, 'b'));
  file.Truncate(3000);
  std::mt19937_64 rng(4);
  for (int i = 0; i < 200; ++i) {
    auto image = *file.ImageAfterCut(Cut::kSubsetTorn, rng);
    ASSERT_TRUE(image.size() == 4096 || image.size() == 3000) << image.size();
    EXPECT_EQ(image.substr(700, 1300), std::string(1300, '.'));
  }
}

}  // namespace
}  // namespace reckon::storage
