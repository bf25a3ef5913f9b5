// Files that hold secrets (base/private_file.h): written only as new files of this user, never
// through a link or into a file someone else owns or may access; read only when private.
// The cases with another user's file need root (chown); they are skipped otherwise.
#include "reckon/base/private_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "tests/support/temp_dir.h"

namespace reckon {
namespace {

namespace fs = std::filesystem;
constexpr uid_t kNobody = 65534;

std::string Content(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct stat Lstat(const std::string& path) {
  struct stat info {};
  EXPECT_EQ(::lstat(path.c_str(), &info), 0) << path;
  return info;
}

// The directory holds exactly `names` (no temporary file left behind).
void ExpectOnly(const testing::TempDir& dir, std::set<std::string> names) {
  std::set<std::string> found;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    found.insert(entry.path().filename().string());
  }
  EXPECT_EQ(found, names);
}

TEST(PrivateFileTest, WritesANewFileOfModeSixHundredAndReplacesItsOwn) {
  testing::TempDir dir;
  const std::string path = dir.File("admin.token");
  ::umask(022);
  ASSERT_TRUE(WritePrivateFile(path, "first\n", "token file"));
  EXPECT_EQ(Content(path), "first\n");
  EXPECT_EQ(Lstat(path).st_mode & 07777, 0600u);
  EXPECT_EQ(Lstat(path).st_uid, ::geteuid());
  const ino_t first = Lstat(path).st_ino;

  ASSERT_TRUE(WritePrivateFile(path, "second\n", "token file"));
  EXPECT_EQ(Content(path), "second\n");
  EXPECT_NE(Lstat(path).st_ino, first) << "replaced by a new file, not rewritten in place";
  ExpectOnly(dir, {"admin.token"});

  auto read = ReadPrivateFile(path, "token file");
  ASSERT_TRUE(read) << read.error().ToString();
  EXPECT_EQ(read.value(), "second\n");
}

TEST(PrivateFileTest, NeverWritesThroughASymbolicLink) {
  testing::TempDir dir;
  const std::string elsewhere = dir.File("elsewhere");
  std::ofstream(elsewhere) << "theirs\n";
  ::chmod(elsewhere.c_str(), 0600);
  const std::string link = dir.File("admin.token");
  fs::create_symlink(elsewhere, link);
  const std::string dangling = dir.File("other.token");
  fs::create_symlink(dir.File("absent"), dangling);

  for (const std::string& path : {link, dangling}) {
    auto written = WritePrivateFile(path, "secret\n", "token file");
    ASSERT_FALSE(written) << path;
    EXPECT_EQ(written.error().code(), Errc::kFailedPrecondition);
    EXPECT_NE(written.error().message().find("'" + path + "' is a symbolic link"),
              std::string::npos)
        << written.error().message();
    EXPECT_NE(written.error().message().find("rm " + path), std::string::npos);
    EXPECT_TRUE(S_ISLNK(Lstat(path).st_mode)) << "the link stays as it was";
  }
  EXPECT_EQ(Content(elsewhere), "theirs\n") << "nothing written through the link";
  EXPECT_FALSE(fs::exists(dir.File("absent"))) << "nothing created through the dangling link";
  ExpectOnly(dir, {"elsewhere", "admin.token", "other.token"});
}

TEST(PrivateFileTest, RefusesAFileOfAnotherUserThatIsWorldWritable) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  testing::TempDir dir;
  const std::string path = dir.File("admin.token");
  std::ofstream(path) << "prepared\n";
  ASSERT_EQ(::chown(path.c_str(), kNobody, kNobody), 0);
  ASSERT_EQ(::chmod(path.c_str(), 0666), 0);

  auto written = WritePrivateFile(path, "secret\n", "token file");
  ASSERT_FALSE(written);
  EXPECT_EQ(written.error().code(), Errc::kFailedPrecondition);
  EXPECT_NE(written.error().message().find("belongs to another user (uid 65534)"),
            std::string::npos)
      << written.error().message();
  EXPECT_EQ(Content(path), "prepared\n");
  EXPECT_EQ(Lstat(path).st_uid, kNobody);
  EXPECT_EQ(Lstat(path).st_mode & 07777, 0666u);
  ExpectOnly(dir, {"admin.token"});

  // Private to that user, it is still theirs: refused the same way.
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  EXPECT_FALSE(WritePrivateFile(path, "secret\n", "token file"));
  EXPECT_EQ(Content(path), "prepared\n");
}

TEST(PrivateFileTest, RefusesAFileOfOursThatOthersMayAccessAndADirectory) {
  testing::TempDir dir;
  const std::string path = dir.File("admin.token");
  std::ofstream(path) << "old\n";
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  auto written = WritePrivateFile(path, "secret\n", "token file");
  ASSERT_FALSE(written);
  EXPECT_EQ(written.error().code(), Errc::kFailedPrecondition);
  EXPECT_NE(written.error().message().find("mode 0644"), std::string::npos)
      << written.error().message();
  EXPECT_EQ(Content(path), "old\n");
  EXPECT_FALSE(CheckPrivateFileTarget(path, "token file"));

  fs::create_directory(dir.File("a-directory"));
  auto into_directory = WritePrivateFile(dir.File("a-directory"), "secret\n", "token file");
  ASSERT_FALSE(into_directory);
  EXPECT_NE(into_directory.error().message().find("not a regular file"), std::string::npos);
  ExpectOnly(dir, {"admin.token", "a-directory"});
}

TEST(PrivateFileTest, ReadsOnlyAPrivateRegularFile) {
  testing::TempDir dir;
  const std::string path = dir.File("key.pem");
  std::ofstream(path) << "secret";
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  auto loose = ReadPrivateFile(path, "--tls-key");
  ASSERT_FALSE(loose);
  EXPECT_EQ(loose.error().code(), Errc::kFailedPrecondition);
  EXPECT_NE(loose.error().message().find("--tls-key '" + path + "'"), std::string::npos)
      << loose.error().message();
  EXPECT_NE(loose.error().message().find("mode 0640"), std::string::npos);
  EXPECT_NE(loose.error().message().find("chmod 600 " + path), std::string::npos);

  ASSERT_EQ(::chmod(path.c_str(), 0400), 0);
  auto read = ReadPrivateFile(path, "--tls-key");
  ASSERT_TRUE(read) << read.error().ToString();
  EXPECT_EQ(read.value(), "secret");

  auto missing = ReadPrivateFile(dir.File("absent"), "--tls-key");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), Errc::kNotFound);
  auto directory = ReadPrivateFile(dir.path().string(), "--tls-key");
  ASSERT_FALSE(directory);
  EXPECT_EQ(directory.error().code(), Errc::kFailedPrecondition);
}

}  // namespace
}  // namespace reckon
