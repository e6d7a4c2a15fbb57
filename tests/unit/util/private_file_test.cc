#include "pkg/util/private_file.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace berth::util {
namespace {

class PrivateFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/berth-private-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    if (DIR* d = ::opendir(dir_.c_str())) {
      while (dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name != "." && name != "..") ::unlink((dir_ + "/" + name).c_str());
      }
      ::closedir(d);
    }
    ::rmdir(dir_.c_str());
  }
  static std::string read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::string dir_;
};

TEST_F(PrivateFileTest, CreatesTheFileWithMode0600) {
  const std::string path = dir_ + "/kc.yaml";
  const mode_t old = ::umask(0);  // even a permissive umask leaves it private
  auto written = writePrivateFile(path, "token: t\n");
  ::umask(old);
  ASSERT_TRUE(written.ok()) << written.error().message;
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_uid, ::geteuid());
  EXPECT_EQ(read(path), "token: t\n");
}

TEST_F(PrivateFileTest, ReplacesAPlantedSymlinkWithoutWritingThroughIt) {
  const std::string target = dir_ + "/victim";
  { std::ofstream(target) << "original"; }
  const std::string path = dir_ + "/kc.yaml";
  ASSERT_EQ(::symlink(target.c_str(), path.c_str()), 0);
  ASSERT_TRUE(writePrivateFile(path, "secret").ok());
  EXPECT_EQ(read(target), "original");
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode)) << "the link itself is replaced";
  EXPECT_EQ(read(path), "secret");
}

TEST_F(PrivateFileTest, ReplacesAPlantedWorldWritableFileRatherThanReusingIt) {
  const std::string path = dir_ + "/kc.yaml";
  { std::ofstream(path) << "planted"; }
  ASSERT_EQ(::chmod(path.c_str(), 0666), 0);
  struct stat before {};
  ASSERT_EQ(::stat(path.c_str(), &before), 0);
  ASSERT_TRUE(writePrivateFile(path, "secret").ok());
  struct stat after {};
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  EXPECT_NE(after.st_ino, before.st_ino) << "a new file, not the planted one";
  EXPECT_EQ(after.st_mode & 07777, 0600u);
  EXPECT_EQ(read(path), "secret");
}

TEST_F(PrivateFileTest, LeavesNoTemporaryFileBehindOnFailure) {
  const std::string path = dir_ + "/sub";
  ASSERT_EQ(::mkdir(path.c_str(), 0700), 0);
  ::mkdir((path + "/x").c_str(), 0700);  // a non-empty directory cannot be renamed over
  auto written = writePrivateFile(path, "secret");
  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.error().message.find("rename " + path), std::string::npos)
      << written.error().message;
  size_t files = 0;
  if (DIR* d = ::opendir(dir_.c_str())) {
    while (dirent* e = ::readdir(d)) files += std::string(e->d_name).starts_with(".sub.tmp-");
    ::closedir(d);
  }
  EXPECT_EQ(files, 0u);
  ::rmdir((path + "/x").c_str());
  ::rmdir(path.c_str());
}

}  // namespace
}  // namespace berth::util
