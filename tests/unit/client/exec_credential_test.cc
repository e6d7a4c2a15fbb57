#include "pkg/client/exec_credential.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace berth::client {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kV1 = "client.authentication.k8s.io/v1";
constexpr const char* kV1Beta1 = "client.authentication.k8s.io/v1beta1";

std::string readAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Small shell-script plugins in a private directory.
class ExecPluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDir() + "berth-exec-" + std::to_string(getpid()) + "-" +
           testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // An executable script `name` with `body` after the shebang; its path.
  std::string script(const std::string& name, const std::string& body) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n" << body;
    fs::permissions(path, fs::perms::owner_all);
    return path;
  }

  // A plugin that counts its runs in dir/runs and prints `credential` as its status.
  ExecConfig countingPlugin(const json& status, const std::string& version = kV1) {
    const json out = {{"apiVersion", version}, {"kind", "ExecCredential"}, {"status", status}};
    ExecConfig c;
    c.user = "ops";
    c.apiVersion = version;
    c.command =
        script("plugin", "echo run >> " + dir_ + "/runs\ncat <<'EOF'\n" + out.dump() + "\nEOF\n");
    c.interactiveMode = InteractiveMode::Never;
    return c;
  }
  int runs() {
    std::ifstream in(dir_ + "/runs");
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }

  std::string dir_;
};

TEST_F(ExecPluginTest, RunsTheCommandWithArgsEnvAndExecInfo) {
  ExecConfig c;
  c.user = "ops";
  c.apiVersion = kV1;
  c.command =
      script("get-token", "printf '%s\\n' \"$@\" > " + dir_ +
                              "/args\n"
                              "printf '%s' \"$AWS_PROFILE\" > " +
                              dir_ +
                              "/profile\n"
                              "printf '%s' \"$KUBERNETES_EXEC_INFO\" > " +
                              dir_ +
                              "/info\n"
                              "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\","
                              "\"kind\":\"ExecCredential\",\"status\":{\"token\":\"tok-1\"}}'\n");
  c.args = {"--cluster", "prod east"};
  c.env = {{"AWS_PROFILE", "ops-profile"}};
  c.interactiveMode = InteractiveMode::IfAvailable;
  c.provideClusterInfo = true;
  c.clusterInfo = R"({"server":"https://10.0.0.1:6443"})";
  auto cred = runExecPlugin(c, /*allowInteractive=*/false);
  ASSERT_TRUE(cred.ok()) << cred.error().message;
  EXPECT_EQ(cred->token, "tok-1");
  EXPECT_FALSE(cred->expiry.has_value());
  EXPECT_EQ(readAll(dir_ + "/args"), "--cluster\nprod east\n");
  EXPECT_EQ(readAll(dir_ + "/profile"), "ops-profile");
  const json info = json::parse(readAll(dir_ + "/info"));
  EXPECT_EQ(info, json::parse(R"({"kind":"ExecCredential","apiVersion":")" + std::string(kV1) +
                              R"(","spec":{"cluster":{"server":"https://10.0.0.1:6443"},)"
                              R"("interactive":false}})"));
}

TEST_F(ExecPluginTest, ReadsAClientCertificate) {
  ExecConfig c = countingPlugin({{"clientCertificateData", "CERT PEM"},
                                 {"clientKeyData", "KEY PEM"},
                                 {"expirationTimestamp", "2024-01-01T02:00:00Z"}},
                                kV1Beta1);
  auto cred = runExecPlugin(c, false);
  ASSERT_TRUE(cred.ok()) << cred.error().message;
  EXPECT_EQ(cred->clientCertPem, "CERT PEM");
  EXPECT_EQ(cred->clientKeyPem, "KEY PEM");
  EXPECT_EQ(cred->token, "");
  ASSERT_TRUE(cred->expiry.has_value());
}

TEST_F(ExecPluginTest, CachesUntilExpiryAndRunsAgainAfterA401) {
  util::FakeClock clock;  // 2024-01-01T01:00:00Z
  ExecCredentialSource source(
      countingPlugin({{"token", "tok"}, {"expirationTimestamp", "2024-01-01T02:00:00Z"}}), false,
      clock);
  ASSERT_TRUE(source.credential().ok());
  ASSERT_TRUE(source.credential().ok());
  EXPECT_EQ(runs(), 1);
  clock.advance(std::chrono::minutes(59));
  ASSERT_TRUE(source.credential().ok());
  EXPECT_EQ(runs(), 1);
  clock.advance(std::chrono::minutes(2));  // past the expiry
  ASSERT_TRUE(source.credential().ok());
  EXPECT_EQ(runs(), 2);

  // Without an expiry a credential lasts until a 401: one for an older token keeps it, one for
  // the current token runs the plugin again.
  ExecCredentialSource untilRejected(countingPlugin({{"token", "tok"}}), false, clock);
  ASSERT_TRUE(untilRejected.credential().ok());
  clock.advance(std::chrono::hours(24));
  ASSERT_TRUE(untilRejected.credential().ok());
  EXPECT_EQ(runs(), 3);
  untilRejected.invalidate("stale");
  ASSERT_TRUE(untilRejected.credential().ok());
  EXPECT_EQ(runs(), 3);
  untilRejected.invalidate("tok");
  auto again = untilRejected.credential();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->token, "tok");
  EXPECT_EQ(runs(), 4);
}

TEST_F(ExecPluginTest, MissingCommandShowsTheInstallHint) {
  ExecConfig c;
  c.user = "ops";
  c.apiVersion = kV1;
  c.command = "berth-no-such-plugin";
  c.installHint = "Install it with: brew install berth-no-such-plugin";
  c.interactiveMode = InteractiveMode::Never;
  ExecCredentialSource source(c, false);
  auto cred = source.credential();
  ASSERT_FALSE(cred.ok());
  const std::string& m = cred.error().message;
  EXPECT_TRUE(m.starts_with(
      "user \"ops\": getting credentials: exec: executable berth-no-such-plugin not found"))
      << m;
  EXPECT_NE(m.find("client-go credential plugin that is not installed"), std::string::npos) << m;
  EXPECT_TRUE(m.ends_with("\n\nInstall it with: brew install berth-no-such-plugin")) << m;
}

TEST_F(ExecPluginTest, FailingPluginSaysItsExitCode) {
  ExecConfig c;
  c.user = "ops";
  c.apiVersion = kV1;
  c.command = script("fails", "echo 'token expired, run login' >&2\nexit 3\n");
  c.interactiveMode = InteractiveMode::Never;
  auto cred = runExecPlugin(c, false);
  ASSERT_FALSE(cred.ok());
  EXPECT_EQ(cred.error().message, "exec: executable " + c.command + " failed with exit code 3");
}

TEST_F(ExecPluginTest, NeverPromptsInTheDaemon) {
  ExecConfig c = countingPlugin({{"token", "t"}});
  c.interactiveMode = InteractiveMode::Always;
  auto cred = runExecPlugin(c, /*allowInteractive=*/false);
  ASSERT_FALSE(cred.ok());
  EXPECT_TRUE(cred.error().message.starts_with("exec plugin cannot support interactive mode: "))
      << cred.error().message;
  EXPECT_EQ(runs(), 0);
}

TEST(ExecCredential, OutputIsCheckedAsClientGoChecksIt) {
  ExecConfig c;
  c.apiVersion = kV1;
  struct Case {
    std::string_view output;
    std::string_view error;
  };
  const Case cases[] = {
      {"not json", "decoding stdout: not a JSON ExecCredential object"},
      {R"({"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential"})",
       "exec plugin is configured to use API version client.authentication.k8s.io/v1, plugin "
       "returned version client.authentication.k8s.io/v1beta1"},
      {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential"})",
       "exec plugin didn't return a status field"},
      {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{}})",
       "exec plugin didn't return a token or cert/key pair"},
      {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",)"
       R"("status":{"clientCertificateData":"C"}})",
       "exec plugin returned only certificate or key, not both (clientCertificateData and "
       "clientKeyData)"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.output);
    auto r = decodeExecCredential(k.output, c);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, k.error);
  }
  auto bad = decodeExecCredential(
      R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",)"
      R"("status":{"token":"t","expirationTimestamp":"soon"}})",
      c);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.error().message.starts_with("decoding stdout: status.expirationTimestamp: "))
      << bad.error().message;
}

}  // namespace
}  // namespace berth::client
