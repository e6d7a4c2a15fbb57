// NodeName: upstream's node_name_test.go, through the runtime.

#include <gtest/gtest.h>

#include "pkg/plugins/nodename/node_name.h"
#include "tests/support/builders.h"

namespace berth::plugins::nodename {
namespace {

using framework::Code;
using test::MakeNode;
using test::MakePod;

TEST(NodeName, FitsOnlyTheRequestedNode) {
  struct Case {
    const char* name;
    test::PodWrapper pod;
    bool fits;
  };
  const Case cases[] = {
      {"no host specified", MakePod().name("p"), true},
      {"host matches", MakePod().name("p").node("foo"), true},
      {"host doesn't match", MakePod().name("p").node("bar"), false},
  };
  test::Harness h(test::profileWith({test::plugin("NodeName")}), {MakeNode().name("foo").obj()});
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto run = h.filter(c.pod.obj());
    ASSERT_TRUE(run.preFilter.isSuccess());
    ASSERT_EQ(run.filter.size(), 1u);
    if (c.fits) {
      EXPECT_TRUE(run.filter[0].isSuccess()) << run.filter[0].message();
    } else {
      EXPECT_EQ(run.filter[0].code(), Code::UnschedulableAndUnresolvable);
      EXPECT_EQ(run.filter[0].message(), "node(s) didn't match the requested node name");
      EXPECT_EQ(run.filter[0].plugin(), "NodeName");
    }
  }
}

TEST(NodeName, IsOnlyAFilter) {
  test::Harness h(test::profileWith({test::plugin("NodeName")}), {MakeNode().name("foo").obj()});
  auto points = h.fw().pluginsByExtensionPoint();
  EXPECT_EQ(points.at("Filter"), std::vector<std::string>{"NodeName"});
  EXPECT_TRUE(points.at("PreFilter").empty());
  EXPECT_TRUE(points.at("Score").empty());
}

}  // namespace
}  // namespace berth::plugins::nodename
