// PrioritySort: higher priority first, then the earlier queue timestamp (upstream's
// queuesort/priority_sort_test.go).

#include <gtest/gtest.h>

#include "pkg/plugins/queuesort/priority_sort.h"
#include "tests/support/builders.h"

namespace berth::plugins::queuesort {
namespace {

using test::MakePod;

framework::QueuedPodInfo queued(test::PodWrapper pod, int64_t micros) {
  return framework::QueuedPodInfo{pod.info(), api::Timestamp{micros}, 0};
}

TEST(PrioritySort, OrdersByPriorityThenTimestamp) {
  struct Case {
    const char* name;
    framework::QueuedPodInfo a, b;
    bool want;
  };
  const Case cases[] = {
      {"p1.priority less than p2.priority", queued(MakePod().name("p1").priority(1), 0),
       queued(MakePod().name("p2").priority(2), 0), false},
      {"p1.priority greater than p2.priority", queued(MakePod().name("p1").priority(2), 0),
       queued(MakePod().name("p2").priority(1), 0), true},
      {"equal priority. p1 is added to schedulingQ earlier than p2",
       queued(MakePod().name("p1").priority(1), 100), queued(MakePod().name("p2").priority(1), 200),
       true},
      {"equal priority. p2 is added to schedulingQ earlier than p1",
       queued(MakePod().name("p1").priority(1), 200), queued(MakePod().name("p2").priority(1), 100),
       false},
      {"equal priority and timestamp: neither is less", queued(MakePod().name("p1"), 5),
       queued(MakePod().name("p2"), 5), false},
      {"no priority counts as 0", queued(MakePod().name("p1"), 0),
       queued(MakePod().name("p2").priority(-1), 0), true},
      {"negative priority sorts after zero", queued(MakePod().name("p1").priority(-5), 0),
       queued(MakePod().name("p2").priority(0), 100), false},
      {"priority beats an earlier timestamp", queued(MakePod().name("p1").priority(1), 900),
       queued(MakePod().name("p2").priority(0), 1), true},
  };
  auto fw = test::mustMakeFramework(test::profileWith({}));
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(fw->less(c.a, c.b), c.want);
  }
}

TEST(PrioritySort, IsTheProfilesQueueSort) {
  auto fw = test::mustMakeFramework(test::profileWith({}));
  EXPECT_EQ(fw->pluginsByExtensionPoint().at("QueueSort"),
            std::vector<std::string>{"PrioritySort"});
}

}  // namespace
}  // namespace berth::plugins::queuesort
