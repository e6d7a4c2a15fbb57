#include "pkg/client/token_source.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "pkg/log/log.h"

namespace berth::client {
namespace {

namespace fs = std::filesystem;

class TokenSourceTest : public ::testing::Test {
 protected:
  TokenSourceTest()
      : dir_(fs::temp_directory_path() /
             ("berth-token-" + std::to_string(::getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    fs::create_directories(dir_);
  }
  ~TokenSourceTest() override { fs::remove_all(dir_); }

  // Writes the file and gives it a distinct mtime, so the change never hides inside the file
  // system's timestamp granularity.
  void write(const std::string& content, int mtimeSeconds) {
    std::ofstream(path()) << content;
    fs::last_write_time(path(),
                        fs::file_time_type(std::chrono::seconds(1700000000 + mtimeSeconds)));
  }
  std::string path() const { return (dir_ / "token").string(); }
  util::Clock& clock() { return clock_; }

  fs::path dir_;
  util::FakeClock clock_;
};

TEST_F(TokenSourceTest, RereadsTheFileWhenItChanges) {
  write("first\n", 1);
  TokenSource tokens("first", path(), std::chrono::seconds(5), clock());
  EXPECT_EQ(tokens.token(), "first");
  write("second\n", 2);
  // Not checked again before the interval.
  clock_.advance(std::chrono::seconds(4));
  EXPECT_EQ(tokens.token(), "first");
  clock_.advance(std::chrono::seconds(1));
  EXPECT_EQ(tokens.token(), "second");
}

TEST_F(TokenSourceTest, RereadsAfterInvalidate) {
  write("first", 1);
  TokenSource tokens("first", path(), std::chrono::minutes(1), clock());
  write("rotated", 2);
  EXPECT_EQ(tokens.token(), "first");
  tokens.invalidate();  // the server said 401
  EXPECT_EQ(tokens.token(), "rotated");
}

TEST_F(TokenSourceTest, KeepsTheTokenWhenTheFileIsEmptyOrGone) {
  write("first", 1);
  TokenSource tokens("first", path(), std::chrono::seconds(1), clock());
  write("  \n", 2);
  clock_.advance(std::chrono::seconds(2));
  EXPECT_EQ(tokens.token(), "first");
  fs::remove(path());
  clock_.advance(std::chrono::seconds(2));
  EXPECT_EQ(tokens.token(), "first");
  write("back", 3);
  clock_.advance(std::chrono::seconds(2));
  EXPECT_EQ(tokens.token(), "back");
}

TEST_F(TokenSourceTest, KeepsTheTokenWhenTheFileIsTooLarge) {
  write("first", 1);
  TokenSource tokens("first", path(), std::chrono::seconds(1), clock());
  write(std::string(kMaxTokenFileBytes + 1, 'x'), 2);
  clock_.advance(std::chrono::seconds(2));
  EXPECT_EQ(tokens.token(), "first");
  // Exactly at the limit is still a token.
  const std::string largest(kMaxTokenFileBytes, 'y');
  write(largest, 3);
  clock_.advance(std::chrono::seconds(2));
  EXPECT_EQ(tokens.token(), largest);
}

TEST_F(TokenSourceTest, KeepsTheTokenWhenTheFileNeverEnds) {
  // A character device has no size to stat: the read stops one byte past the limit.
  TokenSource tokens("first", "/dev/zero", std::chrono::seconds(1), clock());
  tokens.invalidate();
  EXPECT_EQ(tokens.token(), "first");
  clock_.advance(std::chrono::seconds(2));
  EXPECT_EQ(tokens.token(), "first");
}

TEST_F(TokenSourceTest, WarnsWhenOthersMayWriteTheFile) {
  std::ostringstream captured;
  log::setSink([&captured](std::string_view line) { captured << line; });
  write("first", 1);
  fs::permissions(path(), fs::perms::owner_read | fs::perms::owner_write);  // whatever the umask
  TokenSource privateFile("first", path(), std::chrono::seconds(1), clock());
  EXPECT_EQ(captured.str(), "");
  fs::permissions(path(), fs::perms::group_write | fs::perms::others_write, fs::perm_options::add);
  TokenSource sharedFile("first", path(), std::chrono::seconds(1), clock());
  log::setSink({});
  EXPECT_NE(captured.str().find("The token file is writable by group or others"), std::string::npos)
      << captured.str();
  EXPECT_NE(captured.str().find(path()), std::string::npos) << captured.str();
}

TEST_F(TokenSourceTest, AFixedTokenNeverChanges) {
  TokenSource tokens("fixed", "", std::chrono::seconds(1), clock());
  clock_.advance(std::chrono::hours(1));
  EXPECT_EQ(tokens.token(), "fixed");
}

}  // namespace
}  // namespace berth::client
