#include "pkg/log/log.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <regex>
#include <string>
#include <vector>

namespace berth::log {
namespace {

// 2025-12-01 14:36:27.788248 UTC.
const std::chrono::system_clock::time_point kTime{std::chrono::microseconds(1764599787788248)};

class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The text header is in local time, as klog's; pin the zone for the golden lines.
    setenv("TZ", "UTC", 1);  // NOLINT(concurrency-mt-unsafe): before any thread logs
    tzset();
    configure(Format::Text, 0);
    ASSERT_TRUE(setVModule("").ok());
    setSink([this](std::string_view line) { lines_.emplace_back(line); });
  }
  void TearDown() override {
    setSink({});
    configure(Format::Text, 0);
    ASSERT_TRUE(setVModule("").ok());
  }

  std::vector<std::string> lines_;
};

// The call site every golden line below names.
const Location kWhere = Location::here();
const std::string kLine = std::to_string(kWhere.line);

std::string format(Format format, Severity severity, int v, std::string_view msg, Fields fields,
                   std::string_view err = {}) {
  return formatRecord(format, Record{.severity = severity,
                                     .v = v,
                                     .msg = msg,
                                     .err = err,
                                     .fields = fields,
                                     .where = kWhere,
                                     .time = kTime,
                                     .pid = 16336});
}

TEST_F(LogTest, TextHeaderIsKlogs) {
  EXPECT_EQ(format(Format::Text, Severity::Info, 2, "Successfully bound pod to node",
                   {{"pod", kobj("default", "web-1")}, {"node", "n1"}, {"nodes", 6}}),
            "I1201 14:36:27.788248   16336 log_test.cc:" + kLine +
                R"(] "Successfully bound pod to node" pod="default/web-1" node="n1" nodes=6)"
                "\n");
  EXPECT_EQ(format(Format::Text, Severity::Error, 0, "Failed to list", {{"resource", "pods"}},
                   "connection refused"),
            "E1201 14:36:27.788248   16336 log_test.cc:" + kLine +
                R"(] "Failed to list" err="connection refused" resource="pods")"
                "\n");
  EXPECT_EQ(format(Format::Text, Severity::Warning, 0, "w", {}),
            "W1201 14:36:27.788248   16336 log_test.cc:" + kLine + "] \"w\"\n");
}

TEST_F(LogTest, JsonIsComponentBasesShape) {
  const std::string caller = "log/log_test.cc:" + kLine;
  EXPECT_EQ(format(Format::Json, Severity::Info, 2, "Successfully bound pod to node",
                   {{"pod", kobj("default", "web-1")}, {"node", "n1"}, {"b", 1}, {"a", 2}}),
            R"({"ts":1764599787788.248,"caller":")" + caller +
                R"(","msg":"Successfully bound pod to node","v":2,)"
                R"("pod":{"name":"web-1","namespace":"default"},"node":"n1","b":1,"a":2})"
                "\n");
  // Errors carry no "v" and put "err" last, as zapr; a cluster-scoped object has no namespace.
  EXPECT_EQ(format(Format::Json, Severity::Error, 0, "Failed", {{"node", kobj("", "n1")}}, "boom"),
            R"({"ts":1764599787788.248,"caller":")" + caller +
                R"(","msg":"Failed","node":{"name":"n1"},"err":"boom"})"
                "\n");
  EXPECT_EQ(format(Format::Json, Severity::Warning, 0, "w", {}),
            R"({"ts":1764599787788.248,"caller":")" + caller +
                R"(","msg":"w","v":0})"
                "\n");
}

TEST_F(LogTest, LogsTheCallSite) {
  configure(Format::Text, 0);
  const int line = __LINE__ + 1;
  log::info(0, "hello", {{"k", "v"}});
  ASSERT_EQ(lines_.size(), 1u);
  const std::regex header(R"(I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ log_test\.cc:(\d+)\] "hello" k="v"
)");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(lines_[0], m, header)) << lines_[0];
  EXPECT_EQ(m[1].str(), std::to_string(line));

  configure(Format::Json, 0);
  const int jsonLine = __LINE__ + 1;
  log::error("boom", "failed");
  ASSERT_EQ(lines_.size(), 2u);
  const auto parsed = nlohmann::json::parse(lines_[1]);
  EXPECT_EQ(parsed["caller"], "log/log_test.cc:" + std::to_string(jsonLine));
  EXPECT_EQ(parsed["err"], "boom");
}

TEST_F(LogTest, RendersValuesLikeKlog) {
  EXPECT_EQ(renderText("Successfully bound pod to node",
                       {{"pod", "default/web-1"}, {"node", "n1"}, {"evaluatedNodes", 6}}),
            R"("Successfully bound pod to node" pod="default/web-1" node="n1" evaluatedNodes=6)");
  EXPECT_EQ(renderText("Error scheduling pod", {{"pod", "a/b"}}, "connection refused"),
            R"("Error scheduling pod" err="connection refused" pod="a/b")");
  EXPECT_EQ(renderText("quote \" and newline\n", {}), R"("quote \" and newline\n")");
  // A value with line breaks is written as klog writes it: indented lines between < and >.
  EXPECT_EQ(renderText("m", {{"out", "line 1\nline 2"}}), "\"m\" out=<\n\tline 1\n\tline 2\n >");
  EXPECT_EQ(renderText("m", {{"out", "one\n"}}), "\"m\" out=<\n\tone\n >");
}

TEST_F(LogTest, VerbosityGatesInfoMessages) {
  configure(Format::Text, 2);
  EXPECT_TRUE(enabled(0));
  EXPECT_TRUE(enabled(2));
  EXPECT_FALSE(enabled(3));
  log::info(3, "hidden");
  log::info(2, "shown");
  configure(Format::Text, 0);
  EXPECT_FALSE(enabled(1));
  log::warning("warnings always print");
  ASSERT_EQ(lines_.size(), 2u);
  EXPECT_NE(lines_[0].find("\"shown\""), std::string::npos);
  EXPECT_EQ(lines_[1][0], 'W');
}

TEST_F(LogTest, VModuleRaisesVerbosityPerFile) {
  ASSERT_TRUE(setVModule("other=9,log_t*=4").ok());
  EXPECT_TRUE(enabled(4));
  EXPECT_FALSE(enabled(5));
  log::info(4, "from this file");
  EXPECT_EQ(lines_.size(), 1u);
  // The first matching pattern wins; a file no pattern names keeps --v.
  ASSERT_TRUE(setVModule("log_test=1,log_test=6").ok());
  EXPECT_FALSE(enabled(2));
  ASSERT_TRUE(setVModule("elsewhere=3").ok());
  EXPECT_FALSE(enabled(1));
  ASSERT_TRUE(setVModule("").ok());
  EXPECT_FALSE(enabled(1));
}

TEST_F(LogTest, VModuleSyntaxErrorsReadAsKlogs) {
  for (std::string_view bad : {"x", "=3", "x=", "x=y", "x=1=2"}) {
    auto r = setVModule(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().message, "syntax error: expect comma-separated list of filename=N");
  }
  auto negative = setVModule("x=-1");
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.error().message, "negative value for vmodule level");
  EXPECT_TRUE(setVModule("a=1,").ok());
}

TEST_F(LogTest, ParsesFormatFlag) {
  EXPECT_EQ(*parseFormat("json"), Format::Json);
  EXPECT_EQ(*parseFormat("text"), Format::Text);
  auto bad = parseFormat("xml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "invalid argument \"xml\" for \"--log-format\" flag: must be text or json");
}

TEST_F(LogTest, KRefOmitsEmptyNamespace) {
  EXPECT_EQ(ref("default", "web-1"), "default/web-1");
  EXPECT_EQ(ref("", "node-a"), "node-a");
  EXPECT_EQ(kobj("", "node-a").str(), "node-a");
  EXPECT_EQ(renderText("m", {{"node", kobj("", "n1")}}), R"("m" node="n1")");
}

}  // namespace
}  // namespace berth::log
