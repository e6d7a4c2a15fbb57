// End-to-end tests of `berth apiserver`'s credentials: a token from --token-auth-file, never on the
// command line, and a kubeconfig written private from its first byte, through a planted symlink.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/berth_process.h"
#include "tests/support/eventually.h"
#include "tests/support/test_client.h"

namespace berth {
namespace {

using namespace std::chrono_literals;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ApiserverCommand, ServesTokensFromAFileAndWritesAPrivateKubeconfig) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("berth-apiserver-e2e-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string tokens = (dir / "tokens.csv").string();
  { std::ofstream(tokens) << "file-token-123,admin,uid-1,\"system:masters\"\n"; }
  // Another user's world-readable file, reached through a symlink where the kubeconfig goes.
  const std::string victim = (dir / "victim").string();
  { std::ofstream(victim) << "planted"; }
  ::chmod(victim.c_str(), 0666);
  const std::string kubeconfig = (dir / "kc.yaml").string();
  fs::create_symlink(victim, kubeconfig);

  auto process = test::BerthProcess::spawn(
      BERTH_BINARY,
      {"apiserver", "--port", "0", "--token-auth-file", tokens, "--write-kubeconfig", kubeconfig},
      (dir / "apiserver.log").string());
  ASSERT_TRUE(process.ok()) << process.error().message;
  ASSERT_TRUE((*process)->waitForLogLine({"Serving the Kubernetes API"}, 60s))
      << (*process)->logTail();

  EXPECT_EQ(slurp(victim), "planted") << "the symlink was not written through";
  struct stat st {};
  ASSERT_EQ(::lstat(kubeconfig.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  const std::string config = slurp(kubeconfig);
  EXPECT_NE(config.find("token: file-token-123"), std::string::npos) << config;
  const std::string cmdline = slurp("/proc/" + std::to_string((*process)->pid()) + "/cmdline");
  EXPECT_EQ(cmdline.find("file-token-123"), std::string::npos) << "the token is not in ps";

  const size_t at = config.find("server: http://127.0.0.1:");
  ASSERT_NE(at, std::string::npos) << config;
  const auto port = static_cast<uint16_t>(
      std::stoi(config.substr(at + std::string("server: http://127.0.0.1:").size())));
  test::TestClient client(port);
  EXPECT_EQ(client.request("GET", "/api/v1/nodes").code, 401);
  EXPECT_EQ(
      client.request("GET", "/api/v1/nodes", "", {{"Authorization", "bearer file-token-123"}}).code,
      200);
  EXPECT_EQ((*process)->terminate(), 0);
  fs::remove_all(dir);
}

TEST(ApiserverCommand, ATokenFileWithoutTokensIsAClearError) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("berth-apiserver-e2e-bad-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string tokens = (dir / "tokens.csv").string();
  { std::ofstream(tokens) << "only,two\n"; }
  auto process = test::BerthProcess::spawn(
      BERTH_BINARY, {"apiserver", "--port", "0", "--token-auth-file", tokens},
      (dir / "apiserver.log").string());
  ASSERT_TRUE(process.ok()) << process.error().message;
  EXPECT_EQ((*process)->waitForExit(60s), 2) << "a usage error";
  EXPECT_NE((*process)->log().find("token file '" + tokens +
                                   "' must have at least 3 columns (token, user name, user uid), "
                                   "found 2"),
            std::string::npos)
      << (*process)->log();
  fs::remove_all(dir);
}

// At a task limit (RLIMIT_NPROC, as systemd's TasksMax or a container's pids.max), connections the
// server has no thread for are answered 503 and closed; the server lives on.
TEST(ApiserverCommand, SurvivesTheTaskLimit) {
  if (::geteuid() != 0 || ::access("/usr/bin/setpriv", X_OK) != 0 ||
      ::access("/usr/bin/prlimit", X_OK) != 0) {
    GTEST_SKIP()
        << "needs root, setpriv and prlimit to run the server as nobody under a task limit";
  }
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("berth-apiserver-e2e-nproc-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto process = test::BerthProcess::spawn(
      "/usr/bin/setpriv",
      {"--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/prlimit", "--nproc=40",
       BERTH_BINARY, "apiserver", "--port", "0"},
      (dir / "apiserver.log").string());
  ASSERT_TRUE(process.ok()) << process.error().message;
  auto serving = (*process)->waitForLogLine({"Serving the Kubernetes API"}, 60s);
  ASSERT_TRUE(serving) << (*process)->logTail();
  const std::string url = test::logField(*serving, "url").value_or("");
  ASSERT_TRUE(url.starts_with("http://127.0.0.1:")) << *serving;
  const auto port = static_cast<uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
  {
    std::vector<std::unique_ptr<test::TestClient>> held;
    int refused = 0;
    for (int i = 0; i < 100; ++i) {
      held.push_back(std::make_unique<test::TestClient>(port));
      const int code = held.back()->request("GET", "/healthz").code;
      refused += code != 200 ? 1 : 0;  // 503, or a reset that raced it
      ASSERT_TRUE(code == 200 || code == 503 || code == 0) << code;
    }
    EXPECT_GT(refused, 0) << "40 tasks cannot hold 100 connections";
    EXPECT_TRUE((*process)->running()) << (*process)->logTail();
  }
  EXPECT_TRUE(test::eventually([&] {
    return test::TestClient(port).request("GET", "/healthz").code == 200;
  })) << "served again once the connections closed";
  EXPECT_EQ((*process)->terminate(), 0) << (*process)->logTail();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace berth
