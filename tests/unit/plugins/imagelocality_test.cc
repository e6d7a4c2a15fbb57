// ImageLocality: upstream's image_locality_test.go intent (v1.35: init containers count and the
// upper bound grows with the number of containers), through the runtime over a real Snapshot.

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "pkg/plugins/imagelocality/image_locality.h"
#include "tests/support/builders.h"

namespace berth::plugins::imagelocality {
namespace {

using test::MakeNode;
using test::MakePod;

constexpr int64_t kMiB = 1024 * 1024;

config::Profile profile() { return test::profileWith({test::plugin("ImageLocality", 1)}); }

api::ContainerImage image(std::vector<std::string> names, int64_t mib) {
  return api::ContainerImage{std::move(names), mib * kMiB};
}

api::NodePtr nodeWithImages(const std::string& name, std::vector<api::ContainerImage> images) {
  auto node = std::make_shared<api::Node>(*MakeNode().name(name).obj());
  node->status.images = std::move(images);
  return node;
}

// Three nodes as upstream's table has them: one with 40, 300 and 2000 MiB images, one with 250 and
// 10 MiB images, one with none.
api::NodePtr node1() {
  return nodeWithImages("node1", {image({"gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"}, 40),
                                  image({"gcr.io/300:latest", "gcr.io/300:v1"}, 300),
                                  image({"gcr.io/2000:latest"}, 2000)});
}
api::NodePtr node2() {
  return nodeWithImages("node2", {image({"gcr.io/250:latest"}, 250),
                                  image({"gcr.io/10:latest", "gcr.io/10:v1"}, 10)});
}
api::NodePtr node3() { return nodeWithImages("node3", {}); }

api::PodPtr podWith(const std::vector<std::string>& initImages,
                    const std::vector<std::string>& images) {
  return MakePod()
      .name("pod1")
      .mutate([&](api::Pod& p) {
        auto container = [](const std::string& image) {
          api::Container c;
          c.image = image;
          return c;
        };
        for (const auto& i : initImages) p.spec.initContainers.push_back(container(i));
        for (const auto& i : images) p.spec.containers.push_back(container(i));
      })
      .obj();
}

TEST(ImageLocality, ScoreMatchesUpstreamTable) {
  struct Case {
    const char* name;
    std::vector<std::string> initImages, images;
    std::vector<api::NodePtr> nodes;
    std::vector<int64_t> want;
  };
  const std::vector<Case> cases = {
      {"two images spread on two nodes, prefer the larger image one",
       {},
       {"gcr.io/40", "gcr.io/250"},
       {node1(), node2()},
       // node1: 40M/2 < 23M; node2: 100 * (250M/2 - 23M) / (2000M - 23M)
       {0, 5}},
      {"two images on one node, prefer this node",
       {},
       {"gcr.io/40", "gcr.io/300"},
       {node1(), node2()},
       // 100 * ((40M + 300M)/2 - 23M) / (2000M - 23M)
       {7, 0}},
      {"an image larger than the per-container bound is capped",
       {},
       {"gcr.io/10", "gcr.io/2000"},
       {node1(), node2()},
       // node1: 100 * (2000M/2 - 23M) / (2000M - 23M); node2: 10M/2 < 23M
       {49, 0}},
      {"a node without images still counts towards the spread",
       {},
       {"gcr.io/10", "gcr.io/2000"},
       {node1(), node2(), node3()},
       // node1: 100 * (2000M/3 - 23M) / (2000M - 23M)
       {32, 0, 0}},
      {"init containers' images count, and raise the upper bound",
       {"gcr.io/300"},
       {"gcr.io/250"},
       {node1(), node2()},
       // node1: 100 * (300M/2 - 23M) / (2000M - 23M); node2: 100 * (250M/2 - 23M) / (2000M - 23M)
       {6, 5}},
      {"a tagged image matches only that tag",
       {},
       {"gcr.io/300:v1"},
       {node1(), node2()},
       // 100 * (300M/2 - 23M) / (1000M - 23M)
       {12, 0}},
      {"a tag no node holds scores nothing", {}, {"gcr.io/300:v2"}, {node1(), node2()}, {0, 0}},
      {"an image on every node is not scaled down",
       {},
       {"gcr.io/250"},
       {nodeWithImages("a", {image({"gcr.io/250:latest"}, 250)}),
        nodeWithImages("b", {image({"gcr.io/250:latest"}, 250)})},
       // 100 * (250M - 23M) / (1000M - 23M)
       {23, 23}},
      {"the size is the one the first node reports",
       {},
       {"gcr.io/big"},
       {nodeWithImages("a", {image({"gcr.io/big:latest"}, 500)}),
        nodeWithImages("b", {image({"gcr.io/big:latest"}, 100)})},
       // both: 100 * (500M - 23M) / (1000M - 23M)
       {48, 48}},
      {"two containers with the same image count it twice",
       {},
       {"gcr.io/300", "gcr.io/300"},
       {node1(), node2()},
       // 100 * (2 * 300M/2 - 23M) / (2000M - 23M)
       {14, 0}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    test::Harness h(profile(), c.nodes);
    auto run = h.score(podWith(c.initImages, c.images));
    ASSERT_TRUE(run.status.isSuccess()) << run.status.message();
    std::vector<int64_t> got = run.of("ImageLocality");
    // PreScore skips when no node holds any of the pod's images: every node scores 0.
    if (got.empty()) got.assign(c.nodes.size(), 0);
    EXPECT_EQ(got, c.want);
  }
}

TEST(ImageLocality, SkipsScoringWhenNoNodeHoldsThePodsImages) {
  test::Harness h(profile(), {node1(), node2()});
  EXPECT_TRUE(h.score(podWith({}, {"gcr.io/nowhere"})).of("ImageLocality").empty());
  EXPECT_EQ(h.score(podWith({}, {"gcr.io/300"})).of("ImageLocality").size(), 2u);
}

TEST(ImageLocality, NormalizesUntaggedImageNames) {
  struct Case {
    const char* name;
    std::string in, want;
  };
  const std::vector<Case> cases = {
      {"no tag gets :latest", "root", "root:latest"},
      {"a registry port is not a tag", "gcr.io:5000/root", "gcr.io:5000/root:latest"},
      {"a tag is kept", "root:tag", "root:tag"},
      {"a digest is kept", "root@sha256:0123abcd", "root@sha256:0123abcd"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(normalizedImageName(c.in), c.want);
  }
}

TEST(ImageLocality, ReadsOtherNodesSoIsNotNodeLocal) {
  auto fw = test::mustMakeFramework(profile());
  const auto& notLocal = fw->notNodeLocalPlugins();
  EXPECT_NE(std::find(notLocal.begin(), notLocal.end(), "ImageLocality"), notLocal.end());
}

}  // namespace
}  // namespace berth::plugins::imagelocality
