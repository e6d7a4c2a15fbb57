// computePodRequests against upstream's PodRequests (component-helpers/resource/helpers_test.go
// TestPodResourceRequests) and NodeInfo's non-zero rule (types_test.go
// TestPodInfoCalculateResources), plus Resource conversion and arithmetic.

#include "pkg/framework/resource.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/support/builders.h"

namespace berth::framework {
namespace {

using test::MakePod;

constexpr int64_t kGi = int64_t{1} << 30;
constexpr int64_t kMi = int64_t{1} << 20;

TEST(ComputePodRequests, MatchesUpstreamPodRequestsTable) {
  struct Case {
    const char* name;
    test::PodWrapper pod;
    int64_t wantMilliCPU;
    int64_t wantMemory = 0;
  };
  const Case cases[] = {
      {"nil options, larger init container", MakePod().initReq({{"cpu", "4"}}).req({{"cpu", "1"}}),
       4000},
      {"nil options, larger containers",
       MakePod().initReq({{"cpu", "2"}}).req({{"cpu", "2"}}).req({{"cpu", "3"}}), 5000},
      {"pod overhead included",
       MakePod()
           .initReq({{"cpu", "2"}})
           .req({{"cpu", "2"}})
           .req({{"cpu", "3"}})
           .overhead({{"cpu", "1"}, {"memory", "1Gi"}}),
       6000, kGi},
      {"restartable init container", MakePod().sidecarReq({{"cpu", "1"}}).req({{"cpu", "1"}}),
       2000},
      {"multiple restartable init containers",
       // max(5, restartable init containers(3+2+1) + regular(1)) = 7
       MakePod()
           .initReq({{"cpu", "5"}})
           .sidecarReq({{"cpu", "1"}})
           .sidecarReq({{"cpu", "2"}})
           .sidecarReq({{"cpu", "3"}})
           .req({{"cpu", "1"}}),
       7000},
      {"multiple restartable and regular init containers",
       // init-2 needs 5 + the sidecars started before it (1+2) = 8
       MakePod()
           .initReq({{"cpu", "5"}})
           .sidecarReq({{"cpu", "1"}})
           .sidecarReq({{"cpu", "2"}})
           .initReq({{"cpu", "5"}})
           .sidecarReq({{"cpu", "3"}})
           .req({{"cpu", "1"}}),
       8000},
      {"restartable-init, init and regular",
       MakePod().sidecarReq({{"cpu", "10"}}).initReq({{"cpu", "200"}}).req({{"cpu", "100"}}),
       210000},
      {"max is per resource: cpu from init, memory from containers",
       MakePod().initReq({{"cpu", "2"}, {"memory", "1Mi"}}).req({{"cpu", "1"}, {"memory", "1Gi"}}),
       2000, kGi},
      {"no containers", MakePod(), 0},
      {"fractional cpu rounds up to a milli-core per container sum",
       MakePod().req({{"cpu", "0.0001"}}), 1},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Resource r = computePodRequests(c.pod.pod(), /*nonZero=*/false);
    EXPECT_EQ(r.milliCPU, c.wantMilliCPU);
    EXPECT_EQ(r.memory, c.wantMemory);
  }
}

TEST(ComputePodRequests, NonZeroDefaultsOnlyWhenUnset) {
  struct Case {
    const char* name;
    test::PodWrapper pod;
    int64_t wantMilliCPU;
    int64_t wantMemory;
  };
  const Case cases[] = {
      {"requestless container", MakePod().req({}), 100, 200 * kMi},
      {"one container with requests", MakePod().req({{"cpu", "500m"}, {"memory", "500Mi"}}), 500,
       500 * kMi},
      {"two containers with requests",
       MakePod()
           .req({{"cpu", "500m"}, {"memory", "500Mi"}})
           .req({{"cpu", "700m"}, {"memory", "800Mi"}}),
       1200, 1300 * kMi},
      {"only cpu set: memory defaults", MakePod().req({{"cpu", "1"}}), 1000, 200 * kMi},
      {"only memory set: cpu defaults", MakePod().req({{"memory", "1Gi"}}), 100, kGi},
      {"explicit zero is set, not defaulted", MakePod().req({{"cpu", "0"}, {"memory", "0"}}), 0, 0},
      {"defaults per container", MakePod().req({}).req({}).req({{"cpu", "1m"}}), 201, 600 * kMi},
      {"requestless init container defaults too, then max",
       MakePod().initReq({}).req({{"cpu", "50m"}}), 100, 200 * kMi},
      {"sidecar without requests adds defaults", MakePod().sidecarReq({}).req({}), 200, 400 * kMi},
      {"overhead added after defaults", MakePod().req({}).overhead({{"cpu", "10m"}}), 110,
       200 * kMi},
      {"no containers: nothing to default", MakePod(), 0, 0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Resource r = computePodRequests(c.pod.pod(), /*nonZero=*/true);
    EXPECT_EQ(r.milliCPU, c.wantMilliCPU);
    EXPECT_EQ(r.memory, c.wantMemory);
  }
}

TEST(ComputePodRequests, NonZeroNeverAffectsFilterRequests) {
  Resource r = computePodRequests(MakePod().req({}).pod(), /*nonZero=*/false);
  EXPECT_TRUE(r.isZero());
  EXPECT_EQ(r.milliCPU, 0);
  EXPECT_EQ(r.memory, 0);
}

TEST(ComputePodRequests, CountsStorageAndScalarResourcesButNotPods) {
  Resource r = computePodRequests(MakePod()
                                      .req({{"ephemeral-storage", "1Gi"},
                                            {"example.com/gpu", "2"},
                                            {"hugepages-2Mi", "4Mi"},
                                            {"pods", "3"},
                                            {"unknown", "5"}})
                                      .sidecarReq({{"example.com/gpu", "1"}})
                                      .pod(),
                                  false);
  EXPECT_EQ(r.ephemeralStorage, kGi);
  EXPECT_EQ(r.scalarValue("example.com/gpu"), 3);
  EXPECT_EQ(r.scalarValue("hugepages-2Mi"), 4 * kMi);
  EXPECT_EQ(r.allowedPodNumber, 0);
  EXPECT_EQ(r.scalarValue("unknown"), 0);
  EXPECT_EQ(r.get("example.com/gpu"), 3);
  EXPECT_EQ(r.get("ephemeral-storage"), kGi);
}

TEST(Resource, IsScalarResourceName) {
  struct Case {
    const char* name;
    bool want;
  };
  const Case cases[] = {
      {"cpu", false},
      {"memory", false},
      {"pods", false},
      {"ephemeral-storage", false},
      {"example.com/gpu", true},
      {"nvidia.com/gpu", true},
      {"hugepages-2Mi", true},
      {"hugepages-1Gi", true},
      {"attachable-volumes-aws-ebs", true},
      {"kubernetes.io/something", true},
      {"requests.example.com/gpu", false},
      {"foo", false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(isScalarResourceName(c.name), c.want);
  }
}

TEST(Resource, FromListAddSubtract) {
  Resource a = Resource::fromList(test::resourceList(
      {{"cpu", "1500m"}, {"memory", "2Gi"}, {"pods", "110"}, {"example.com/gpu", "4"}}));
  EXPECT_EQ(a.milliCPU, 1500);
  EXPECT_EQ(a.memory, 2 * kGi);
  EXPECT_EQ(a.allowedPodNumber, 110);
  EXPECT_EQ(a.scalarValue("example.com/gpu"), 4);
  EXPECT_EQ(a.get("pods"), 110);
  EXPECT_EQ(a.get("cpu"), 1500);

  Resource b = Resource::fromList(
      test::resourceList({{"cpu", "500m"}, {"example.com/gpu", "1"}, {"hugepages-2Mi", "2Mi"}}));
  a.add(b);
  EXPECT_EQ(a.milliCPU, 2000);
  EXPECT_EQ(a.scalarValue("example.com/gpu"), 5);
  EXPECT_EQ(a.scalarValue("hugepages-2Mi"), 2 * kMi);
  a.subtract(b);
  a.subtract(b);
  EXPECT_EQ(a.milliCPU, 1000);
  EXPECT_EQ(a.scalarValue("example.com/gpu"), 3);
  EXPECT_EQ(a.scalarValue("hugepages-2Mi"), -2 * kMi);

  Resource z;
  EXPECT_TRUE(z.isZero());
  z.setScalar("example.com/gpu", 0);
  EXPECT_TRUE(z.isZero());
  z.setScalar("example.com/gpu", 1);
  EXPECT_FALSE(z.isZero());
}

}  // namespace
}  // namespace berth::framework
