// NodeResourcesFit and NodeResourcesBalancedAllocation, driven directly (PreFilter/Filter,
// PreScore/Score) on NodeInfos built from api objects. Expectations are upstream's own test cases
// (fit_test.go, least_allocated_test.go, most_allocated_test.go,
// requested_to_capacity_ratio_test.go, balanced_allocation_test.go) unless a case says otherwise.

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <new>
#include <string>
#include <vector>

#include "pkg/config/config.h"
#include "pkg/framework/cycle_state.h"
#include "pkg/framework/interface.h"
#include "pkg/framework/node_info.h"
#include "pkg/framework/pod_info.h"
#include "pkg/plugins/noderesources/balanced_allocation.h"
#include "pkg/plugins/noderesources/fit.h"
#include "pkg/plugins/noderesources/resource_allocation.h"

// Counts heap allocations while armed, to hold Filter and Score to "no allocation on success".
// ThreadSanitizer's runtime defines operator new itself, so under it nothing is counted.
namespace {
std::atomic<bool> g_count_allocations{false};
std::atomic<int64_t> g_allocations{0};
}  // namespace

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BERTH_TSAN_RUNTIME 1
#endif
#endif
#ifndef BERTH_TSAN_RUNTIME
// Out of line, so the compiler does not pair an inlined malloc/free with new/delete.
[[gnu::noinline]] void* operator new(std::size_t size) {
  if (g_count_allocations.load(std::memory_order_relaxed)) g_allocations++;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// The nothrow form too (std::stable_sort's buffer): its memory reaches the delete below.
[[gnu::noinline]] void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  if (g_count_allocations.load(std::memory_order_relaxed)) g_allocations++;
  return std::malloc(size == 0 ? 1 : size);
}
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#endif

namespace berth::plugins::noderesources {
namespace {

using framework::Code;
using Requests = std::map<std::string, std::string>;

resource::Quantity quantity(const std::string& text) {
  auto q = resource::Quantity::parse(text);
  EXPECT_TRUE(q.ok()) << text;
  return q.ok() ? *q : resource::Quantity();
}

api::ResourceList resourceList(const Requests& requests) {
  api::ResourceList list;
  for (const auto& [name, value] : requests) list[name] = quantity(value);
  return list;
}

// Upstream's framework.Resource{MilliCPU, Memory}.ResourceList(): cpu and memory always set.
Requests cpuMem(int64_t milliCPU, int64_t memory, Requests extra = {}) {
  extra["cpu"] = std::to_string(milliCPU) + "m";
  extra["memory"] = std::to_string(memory);
  return extra;
}

class PodBuilder {
 public:
  // A container with these requests (upstream's st.MakePod().Req(...)).
  PodBuilder& req(const Requests& r) {
    pod_.spec.containers.push_back(container(r));
    return *this;
  }
  // A container with no requests at all (scoring counts it as 100m / 200Mi).
  PodBuilder& emptyContainer() {
    pod_.spec.containers.push_back(api::Container{});
    return *this;
  }
  PodBuilder& init(const Requests& r) {
    pod_.spec.initContainers.push_back(container(r));
    return *this;
  }
  PodBuilder& sidecar(const Requests& r) {
    auto c = container(r);
    c.restartPolicy = "Always";
    pod_.spec.initContainers.push_back(std::move(c));
    return *this;
  }
  PodBuilder& overhead(const Requests& r) {
    pod_.spec.overhead = resourceList(r);
    return *this;
  }
  framework::PodInfoPtr info() const {
    return framework::makePodInfo(std::make_shared<const api::Pod>(pod_));
  }

 private:
  static api::Container container(const Requests& r) {
    api::Container c;
    c.resources.requests = resourceList(r);
    return c;
  }
  api::Pod pod_;
};

framework::NodeInfo makeNode(const Requests& allocatable,
                             const std::vector<framework::PodInfoPtr>& pods = {}) {
  api::Node node;
  node.metadata.name = "node";
  node.status.allocatable = resourceList(allocatable);
  node.status.capacity = node.status.allocatable;
  framework::NodeInfo info(std::make_shared<const api::Node>(std::move(node)));
  for (const auto& p : pods) info.addPod(p);
  return info;
}

// Upstream's st.MakeNode().Capacity(...): 32 pods unless given.
framework::NodeInfo scoringNode(Requests capacity, const std::vector<framework::PodInfoPtr>& pods) {
  capacity.try_emplace("pods", "32");
  return makeNode(capacity, pods);
}

// Fit's args with this strategy; no resources means the defaults (cpu and memory).
NodeResourcesFitArgs fitProfile(ScoringStrategy::Type type,
                                std::vector<ResourceSpec> resources = {},
                                std::vector<UtilizationShapePoint> shape = {}) {
  NodeResourcesFitArgs args;
  args.scoringStrategy.type = type;
  if (!resources.empty()) args.scoringStrategy.resources = std::move(resources);
  args.scoringStrategy.shape = std::move(shape);
  return args;
}

framework::PluginPtr mustCreate(util::Result<framework::PluginPtr> result) {
  EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().message);
  return result.ok() ? std::move(result).value() : nullptr;
}

// --- Filter ------------------------------------------------------------------------------------

struct FilterCase {
  std::string name;
  framework::PodInfoPtr pod;
  Requests existing;                     // requests of the one pod already on the node
  std::vector<std::string> wantReasons;  // empty: fits
  std::vector<std::string> ignoredResources = {};
  std::vector<std::string> ignoredGroups = {};
};

// The node of upstream's TestEnoughRequests: makeAllocatableResources(10, 20, 32, 5, 20, 5).
const Requests kEnoughNode = {{"cpu", "10m"},
                              {"memory", "20"},
                              {"pods", "32"},
                              {"example.com/aaa", "5"},
                              {"ephemeral-storage", "20"},
                              {"hugepages-2Mi", "5"}};

void runFilterCases(const std::vector<FilterCase>& cases, const Requests& allocatable) {
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    NodeResourcesFitArgs args = fitProfile(ScoringStrategy::Type::LeastAllocated);
    args.ignoredResources = tc.ignoredResources;
    args.ignoredResourceGroups = tc.ignoredGroups;
    auto plugin = mustCreate(newFit(args, framework::Handle{}));
    ASSERT_NE(plugin, nullptr);
    auto& pf = dynamic_cast<framework::PreFilterPlugin&>(*plugin);
    auto& f = dynamic_cast<framework::FilterPlugin&>(*plugin);

    auto node = makeNode(allocatable, {PodBuilder().req(tc.existing).info()});
    framework::CycleState state;
    framework::PreFilterResult result;
    ASSERT_TRUE(pf.preFilter(state, *tc.pod, result).isSuccess());
    auto status = f.filter(state, *tc.pod, node);
    if (tc.wantReasons.empty()) {
      EXPECT_TRUE(status.isSuccess()) << status.message();
    } else {
      EXPECT_EQ(status.code(), Code::Unschedulable);
      EXPECT_EQ(status.reasons(), tc.wantReasons);
    }
  }
}

TEST(NodeResourcesFit, FilterChecksEveryRequestedResource) {
  const std::string cpu = "Insufficient cpu";
  const std::string mem = "Insufficient memory";
  const std::string aaa = "Insufficient example.com/aaa";
  const std::string hugepages = "Insufficient hugepages-2Mi";
  std::vector<FilterCase> cases = {
      {"no resources requested always fits", PodBuilder().info(), cpuMem(10, 20), {}},
      {"too many resources fails",
       PodBuilder().req(cpuMem(1, 1)).info(),
       cpuMem(10, 20),
       {cpu, mem}},
      {"too many resources fails due to init container cpu",
       PodBuilder().req(cpuMem(1, 1)).init(cpuMem(3, 1)).info(),
       cpuMem(8, 19),
       {cpu}},
      {"too many resources fails due to highest init container cpu",
       PodBuilder().req(cpuMem(1, 1)).init(cpuMem(3, 1)).init(cpuMem(2, 1)).info(),
       cpuMem(8, 19),
       {cpu}},
      {"too many resources fails due to init container memory",
       PodBuilder().req(cpuMem(1, 1)).init(cpuMem(1, 3)).info(),
       cpuMem(9, 19),
       {mem}},
      {"too many resources fails due to highest init container memory",
       PodBuilder().req(cpuMem(1, 1)).init(cpuMem(1, 3)).init(cpuMem(1, 2)).info(),
       cpuMem(9, 19),
       {mem}},
      {"init container fits because it's the max, not sum, of containers and init containers",
       PodBuilder().req(cpuMem(1, 1)).init(cpuMem(1, 1)).info(),
       cpuMem(9, 19),
       {}},
      {"multiple init containers fit because it's the max, not sum, of containers and init "
       "containers",
       PodBuilder().req(cpuMem(1, 1)).init(cpuMem(1, 1)).init(cpuMem(1, 1)).info(),
       cpuMem(9, 19),
       {}},
      {"both resources fit", PodBuilder().req(cpuMem(1, 1)).info(), cpuMem(5, 5), {}},
      {"one resource memory fits", PodBuilder().req(cpuMem(2, 1)).info(), cpuMem(9, 5), {cpu}},
      {"one resource cpu fits", PodBuilder().req(cpuMem(1, 2)).info(), cpuMem(5, 19), {mem}},
      {"equal edge case", PodBuilder().req(cpuMem(5, 1)).info(), cpuMem(5, 19), {}},
      {"equal edge case for init container",
       PodBuilder().req(cpuMem(4, 1)).init(cpuMem(5, 1)).info(),
       cpuMem(5, 19),
       {}},
      {"extended resource fits",
       PodBuilder().req(cpuMem(0, 0, {{"example.com/aaa", "1"}})).info(),
       cpuMem(0, 0),
       {}},
      {"extended resource fits for init container",
       PodBuilder().req(cpuMem(0, 0)).init(cpuMem(0, 0, {{"example.com/aaa", "1"}})).info(),
       cpuMem(0, 0),
       {}},
      {"extended resource capacity enforced",
       PodBuilder().req(cpuMem(1, 1, {{"example.com/aaa", "10"}})).info(),
       cpuMem(0, 0, {{"example.com/aaa", "0"}}),
       {aaa}},
      {"extended resource capacity enforced for init container",
       PodBuilder().req(cpuMem(0, 0)).init(cpuMem(1, 1, {{"example.com/aaa", "10"}})).info(),
       cpuMem(0, 0, {{"example.com/aaa", "0"}}),
       {aaa}},
      {"extended resource allocatable enforced",
       PodBuilder().req(cpuMem(1, 1, {{"example.com/aaa", "1"}})).info(),
       cpuMem(0, 0, {{"example.com/aaa", "5"}}),
       {aaa}},
      {"extended resource allocatable enforced for init container",
       PodBuilder().req(cpuMem(0, 0)).init(cpuMem(1, 1, {{"example.com/aaa", "1"}})).info(),
       cpuMem(0, 0, {{"example.com/aaa", "5"}}),
       {aaa}},
      {"extended resource allocatable enforced for multiple containers",
       PodBuilder()
           .req(cpuMem(1, 1, {{"example.com/aaa", "3"}}))
           .req(cpuMem(1, 1, {{"example.com/aaa", "3"}}))
           .info(),
       cpuMem(0, 0, {{"example.com/aaa", "2"}}),
       {aaa}},
      {"extended resource allocatable admits multiple init containers",
       PodBuilder()
           .req(cpuMem(0, 0))
           .init(cpuMem(1, 1, {{"example.com/aaa", "3"}}))
           .init(cpuMem(1, 1, {{"example.com/aaa", "3"}}))
           .info(),
       cpuMem(0, 0, {{"example.com/aaa", "2"}}),
       {}},
      {"extended resource allocatable enforced for multiple init containers",
       PodBuilder()
           .req(cpuMem(0, 0))
           .init(cpuMem(1, 1, {{"example.com/aaa", "6"}}))
           .init(cpuMem(1, 1, {{"example.com/aaa", "3"}}))
           .info(),
       cpuMem(0, 0, {{"example.com/aaa", "2"}}),
       {aaa}},
      {"extended resource allocatable enforced for unknown resource",
       PodBuilder().req(cpuMem(1, 1, {{"example.com/bbb", "1"}})).info(),
       cpuMem(0, 0),
       {"Insufficient example.com/bbb"}},
      {"extended resource allocatable enforced for unknown resource for init container",
       PodBuilder().req(cpuMem(0, 0)).init(cpuMem(1, 1, {{"example.com/bbb", "1"}})).info(),
       cpuMem(0, 0),
       {"Insufficient example.com/bbb"}},
      {"kubernetes.io resource capacity enforced",
       PodBuilder().req(cpuMem(1, 1, {{"kubernetes.io/something", "10"}})).info(),
       cpuMem(0, 0),
       {"Insufficient kubernetes.io/something"}},
      {"kubernetes.io resource capacity enforced for init container",
       PodBuilder()
           .req(cpuMem(0, 0))
           .init(cpuMem(1, 1, {{"subdomain.kubernetes.io/something", "10"}}))
           .info(),
       cpuMem(0, 0),
       {"Insufficient subdomain.kubernetes.io/something"}},
      {"hugepages resource capacity enforced",
       PodBuilder().req(cpuMem(1, 1, {{"hugepages-2Mi", "10"}})).info(),
       cpuMem(0, 0, {{"hugepages-2Mi", "0"}}),
       {hugepages}},
      {"hugepages resource capacity enforced for init container",
       PodBuilder().req(cpuMem(0, 0)).init(cpuMem(1, 1, {{"hugepages-2Mi", "10"}})).info(),
       cpuMem(0, 0, {{"hugepages-2Mi", "0"}}),
       {hugepages}},
      {"hugepages resource allocatable enforced for multiple containers",
       PodBuilder()
           .req(cpuMem(1, 1, {{"hugepages-2Mi", "3"}}))
           .req(cpuMem(1, 1, {{"hugepages-2Mi", "3"}}))
           .info(),
       cpuMem(0, 0, {{"hugepages-2Mi", "2"}}),
       {hugepages}},
      {"skip checking ignored extended resource",
       PodBuilder().req(cpuMem(1, 1, {{"example.com/bbb", "1"}})).info(),
       cpuMem(0, 0),
       {},
       {"example.com/bbb"}},
      {"skip checking ignored extended resource via resource groups",
       PodBuilder().req(cpuMem(1, 1, {{"example.com/bbb", "1"}})).info(),
       cpuMem(0, 0),
       {},
       {},
       {"example.com"}},
      // berth: ignoring applies to extended resources only, never to kubernetes.io names.
      {"an ignored group does not cover kubernetes.io resources",
       PodBuilder().req(cpuMem(1, 1, {{"kubernetes.io/something", "1"}})).info(),
       cpuMem(0, 0),
       {"Insufficient kubernetes.io/something"},
       {"kubernetes.io/something"},
       {"kubernetes.io"}},
      {"skip checking resource request with quantity zero",
       PodBuilder().req(cpuMem(1, 1, {{"example.com/bbb", "0"}})).info(),
       cpuMem(0, 0),
       {}},
      {"resources + pod overhead fits",
       PodBuilder().req(cpuMem(1, 1)).overhead({{"cpu", "3m"}, {"memory", "13"}}).info(),
       cpuMem(5, 5),
       {}},
      {"requests + overhead does not fit for memory",
       PodBuilder().req(cpuMem(1, 1)).overhead({{"cpu", "1m"}, {"memory", "15"}}).info(),
       cpuMem(5, 5),
       {mem}},
      // berth: sidecars (restartable init containers) as upstream's PodRequests counts them.
      {"sidecar requests add to the containers' requests",
       PodBuilder().sidecar(cpuMem(3, 1)).req(cpuMem(3, 1)).info(),
       cpuMem(5, 5),
       {cpu}},
      {"an init container after a sidecar needs its own requests plus the sidecar's",
       PodBuilder().sidecar(cpuMem(2, 1)).init(cpuMem(7, 1)).req(cpuMem(1, 1)).info(),
       cpuMem(2, 5),
       {cpu}},
      {"an init container before a sidecar needs only its own requests",
       PodBuilder().init(cpuMem(7, 1)).sidecar(cpuMem(2, 1)).req(cpuMem(1, 1)).info(),
       cpuMem(2, 5),
       {}},
      {"sidecar, init container and overhead together",
       PodBuilder()
           .sidecar(cpuMem(2, 2))
           .init(cpuMem(4, 4))
           .req(cpuMem(1, 1))
           .overhead({{"cpu", "2m"}, {"memory", "2"}})
           .info(),
       cpuMem(3, 12),
       {cpu}},
      // berth: all shortages in one status, scalar resources by name.
      {"every insufficient resource is reported, in order",
       PodBuilder()
           .req(cpuMem(
               11, 21,
               {{"ephemeral-storage", "21"}, {"hugepages-2Mi", "6"}, {"example.com/aaa", "6"}}))
           .info(),
       cpuMem(0, 0),
       {cpu, mem, "Insufficient ephemeral-storage", aaa, hugepages}},
  };
  runFilterCases(cases, kEnoughNode);
}

TEST(NodeResourcesFit, FilterRejectsTooManyPods) {
  // makeAllocatableResources(10, 20, 1, 0, 0, 0): room for one pod, which is taken.
  const Requests node = {
      {"cpu", "10m"},           {"memory", "20"},           {"pods", "1"},
      {"example.com/aaa", "0"}, {"ephemeral-storage", "0"}, {"hugepages-2Mi", "0"}};
  std::vector<FilterCase> cases = {
      {"even without specified resources predicate fails when there's no space for additional pod",
       PodBuilder().info(),
       cpuMem(10, 20),
       {"Too many pods"}},
      {"even if both resources fit predicate fails when there's no space for additional pod",
       PodBuilder().req(cpuMem(1, 1)).info(),
       cpuMem(5, 5),
       {"Too many pods"}},
      {"even for equal edge case predicate fails when there's no space for additional pod",
       PodBuilder().req(cpuMem(5, 1)).info(),
       cpuMem(5, 19),
       {"Too many pods"}},
      {"even for equal edge case predicate fails when there's no space for additional pod due to "
       "init container",
       PodBuilder().req(cpuMem(5, 1)).init(cpuMem(5, 1)).info(),
       cpuMem(5, 19),
       {"Too many pods"}},
      // berth: the pod count comes first, then the resources.
      {"too many pods and insufficient cpu",
       PodBuilder().req(cpuMem(6, 1)).info(),
       cpuMem(5, 5),
       {"Too many pods", "Insufficient cpu"}},
  };
  runFilterCases(cases, node);
}

TEST(NodeResourcesFit, FilterChecksEphemeralStorage) {
  std::vector<FilterCase> cases = {
      {"due to container scratch disk",
       PodBuilder().req(cpuMem(1, 1)).info(),
       cpuMem(10, 10),
       {"Insufficient cpu"}},
      {"pod fit", PodBuilder().req(cpuMem(1, 1)).info(), cpuMem(2, 10), {}},
      {"storage ephemeral local storage request exceeds allocatable",
       PodBuilder().req(cpuMem(0, 0, {{"ephemeral-storage", "25"}})).info(),
       cpuMem(2, 2),
       {"Insufficient ephemeral-storage"}},
      {"pod fits",
       PodBuilder().req(cpuMem(0, 0, {{"ephemeral-storage", "10"}})).info(),
       cpuMem(2, 2),
       {}},
      // berth: storage already requested on the node counts.
      {"storage requested by pods on the node counts",
       PodBuilder().req(cpuMem(0, 0, {{"ephemeral-storage", "10"}})).info(),
       cpuMem(2, 2, {{"ephemeral-storage", "15"}}),
       {"Insufficient ephemeral-storage"}},
  };
  runFilterCases(cases, kEnoughNode);
}

TEST(NodeResourcesFit, FilterWithoutPreFilterIsAnError) {
  auto plugin = mustCreate(newFit(fitProfile(ScoringStrategy::Type::LeastAllocated), {}));
  ASSERT_NE(plugin, nullptr);
  auto pod = PodBuilder().info();
  auto node = makeNode({});
  framework::CycleState state;
  auto status = dynamic_cast<framework::FilterPlugin&>(*plugin).filter(state, *pod, node);
  EXPECT_EQ(status.code(), Code::Error);
  EXPECT_EQ(status.message(),
            "error reading \"PreFilterNodeResourcesFit\" from cycleState: not found");
}

// --- Score ---------------------------------------------------------------------------------------

struct NodeSpec {
  Requests capacity;
  std::vector<framework::PodInfoPtr> pods;
};

struct ScoreCase {
  std::string name;
  framework::PodInfoPtr pod;
  std::vector<NodeSpec> nodes;
  std::vector<ResourceSpec> resources;
  std::vector<int64_t> want;
};

const std::vector<ResourceSpec> kDefaultResources = {{"cpu", 1}, {"memory", 1}};
const std::string kExtendedRes = "abc.com/xyz";
const std::vector<ResourceSpec> kExtendedResourceSet = {
    {"cpu", 1}, {"memory", 1}, {kExtendedRes, 1}};

std::vector<int64_t> scoreAll(const framework::Plugin& plugin, const framework::PodInfo& pod,
                              const std::vector<NodeSpec>& specs, bool runPreScore,
                              Code wantPreScore = Code::Success) {
  std::vector<framework::NodeInfo> nodes;
  for (const auto& s : specs) nodes.push_back(scoringNode(s.capacity, s.pods));
  std::vector<const framework::NodeInfo*> pointers;
  for (const auto& n : nodes) pointers.push_back(&n);

  framework::CycleState state;
  if (runPreScore) {
    auto status =
        dynamic_cast<const framework::PreScorePlugin&>(plugin).preScore(state, pod, pointers);
    EXPECT_EQ(status.code(), wantPreScore);
    if (status.isSkip()) return {};
  }
  std::vector<int64_t> scores;
  for (const auto& n : nodes) {
    int64_t score = -1;
    auto status = dynamic_cast<const framework::ScorePlugin&>(plugin).score(state, pod, n, score);
    EXPECT_TRUE(status.isSuccess()) << status.message();
    scores.push_back(score);
  }
  return scores;
}

void runFitScoreCases(ScoringStrategy::Type type, const std::vector<ScoreCase>& cases,
                      const std::vector<UtilizationShapePoint>& shape = {}) {
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    auto plugin = mustCreate(newFit(fitProfile(type, tc.resources, shape), {}));
    ASSERT_NE(plugin, nullptr);
    EXPECT_EQ(scoreAll(*plugin, *tc.pod, tc.nodes, /*runPreScore=*/true), tc.want);
    // Without PreScore the plugin computes the pod's requests itself, with the same result.
    EXPECT_EQ(scoreAll(*plugin, *tc.pod, tc.nodes, /*runPreScore=*/false), tc.want);
  }
}

framework::PodInfoPtr reqPod(const Requests& r1, const Requests& r2 = {}) {
  PodBuilder b;
  b.req(r1);
  if (!r2.empty()) b.req(r2);
  return b.info();
}

TEST(NodeResourcesFit, LeastAllocatedScores) {
  const Requests small = {{"cpu", "4000"}, {"memory", "10000"}};
  auto noReq = PodBuilder().info();
  auto pod12 = reqPod({{"cpu", "1000"}, {"memory", "2000"}}, {{"cpu", "2000"}, {"memory", "3000"}});
  auto cpu3k = reqPod({{"cpu", "3000"}, {"memory", "0"}});
  auto cpu3kMem5k = reqPod({{"cpu", "3000"}, {"memory", "5000"}});
  std::vector<ScoreCase> cases = {
      {"nothing scheduled, nothing requested",
       noReq,
       {{small, {}}, {small, {}}},
       kDefaultResources,
       {100, 100}},
      {"nothing scheduled, resources requested, differently sized nodes",
       pod12,
       {{small, {}}, {{{"cpu", "6000"}, {"memory", "10000"}}, {}}},
       kDefaultResources,
       {37, 50}},
      {"no resources requested, pods scheduled",
       noReq,
       {{small, {PodBuilder().info(), PodBuilder().info()}},
        {small, {PodBuilder().info(), PodBuilder().info()}}},
       kDefaultResources,
       {100, 100}},
      {"no resources requested, pods scheduled with resources",
       noReq,
       {{{{"cpu", "10000"}, {"memory", "20000"}}, {cpu3k, cpu3k}},
        {{{"cpu", "10000"}, {"memory", "20000"}}, {cpu3k, cpu3kMem5k}}},
       kDefaultResources,
       {70, 57}},
      {"resources requested, pods scheduled with resources",
       pod12,
       {{{{"cpu", "10000"}, {"memory", "20000"}}, {cpu3k}},
        {{{"cpu", "10000"}, {"memory", "20000"}}, {cpu3kMem5k}}},
       kDefaultResources,
       {57, 45}},
      {"resources requested, pods scheduled with resources, differently sized nodes",
       pod12,
       {{{{"cpu", "10000"}, {"memory", "20000"}}, {cpu3k}},
        {{{"cpu", "10000"}, {"memory", "50000"}}, {cpu3kMem5k}}},
       kDefaultResources,
       {57, 60}},
      {"requested resources exceed node capacity",
       cpu3k,
       {{small, {cpu3k}}, {small, {cpu3kMem5k}}},
       kDefaultResources,
       {50, 25}},
      {"zero node resources, pods scheduled with resources",
       noReq,
       {{{}, {cpu3k}}, {{}, {cpu3kMem5k}}},
       kDefaultResources,
       {0, 0}},
      {"nothing scheduled, resources requested with different weight on CPU and memory, "
       "differently sized nodes",
       pod12,
       {{small, {}}, {{{"cpu", "6000"}, {"memory", "10000"}}, {}}},
       {{"memory", 2}, {"cpu", 1}},
       {41, 50}},
      {"bypass extended resource if the pod does not request",
       pod12,
       {{{{"cpu", "6000"}, {"memory", "10000"}}, {}},
        {{{"cpu", "6000"}, {"memory", "10000"}, {kExtendedRes, "4"}}, {}}},
       kExtendedResourceSet,
       {50, 50}},
      {"honor extended resource if the pod requests",
       reqPod({{"cpu", "3000"}, {"memory", "5000"}, {kExtendedRes, "2"}}),
       {{{{"cpu", "6000"}, {"memory", "10000"}, {kExtendedRes, "4"}}, {}},
        {{{"cpu", "6000"}, {"memory", "10000"}, {kExtendedRes, "10"}}, {}}},
       kExtendedResourceSet,
       {50, 60}},
      {"if the node doesn't have a resource",
       reqPod({{"cpu", "3000"}, {"memory", "4000"}}),
       {{{{"cpu", "6000"}, {"memory", "10000"}}, {}},
        {{{"cpu", "6000"}, {"memory", "10000"}, {kExtendedRes, "4"}}, {}}},
       {{kExtendedRes, 2}, {"cpu", 1}, {"memory", 1}},
       {55, 55}},
      // berth: an empty resource list means cpu:1, memory:1.
      {"empty resources default to cpu and memory",
       pod12,
       {{small, {}}, {{{"cpu", "6000"}, {"memory", "10000"}}, {}}},
       {},
       {37, 50}},
  };
  runFitScoreCases(ScoringStrategy::Type::LeastAllocated, cases);
}

TEST(NodeResourcesFit, MostAllocatedScores) {
  const Requests small = {{"cpu", "4000"}, {"memory", "10000"}};
  const Requests big = {{"cpu", "10000"}, {"memory", "20000"}};
  auto noReq = PodBuilder().info();
  auto pod12 = reqPod({{"cpu", "1000"}, {"memory", "2000"}}, {{"cpu", "2000"}, {"memory", "3000"}});
  auto cpu3k = reqPod({{"cpu", "3000"}, {"memory", "0"}});
  auto cpu3kMem5k = reqPod({{"cpu", "3000"}, {"memory", "5000"}});
  auto defaults = PodBuilder().emptyContainer().info();
  std::vector<ScoreCase> cases = {
      {"nothing scheduled, nothing requested",
       noReq,
       {{small, {}}, {small, {}}},
       kDefaultResources,
       {0, 0}},
      {"nothing scheduled, resources requested, differently sized nodes",
       pod12,
       {{small, {}}, {{{"cpu", "6000"}, {"memory", "10000"}}, {}}},
       kDefaultResources,
       {62, 50}},
      {"no resources requested, pods scheduled with resources",
       noReq,
       {{big, {cpu3k, cpu3k}}, {big, {cpu3k, cpu3kMem5k}}},
       kDefaultResources,
       {30, 42}},
      {"resources requested, pods scheduled with resources",
       pod12,
       {{big, {cpu3k}}, {big, {cpu3kMem5k}}},
       kDefaultResources,
       {42, 55}},
      {"resources requested equal node capacity",
       reqPod({{"cpu", "2000"}, {"memory", "4000"}}, {{"cpu", "3000"}, {"memory", "5000"}}),
       {{{{"cpu", "5000"}, {"memory", "10000"}}, {}}, {{{"cpu", "10000"}, {"memory", "9000"}}, {}}},
       kDefaultResources,
       {95, 75}},
      {"nothing scheduled, resources requested, differently sized nodes, weighted",
       pod12,
       {{small, {}}, {{{"cpu", "6000"}, {"memory", "10000"}}, {}}},
       {{"memory", 2}, {"cpu", 1}},
       {58, 50}},
      {"no resources requested, pods scheduled, nonzero request for resource",
       defaults,
       {{{{"cpu", "250m"}, {"memory", "1000Mi"}}, {defaults, defaults}},
        {{{"cpu", "250m"}, {"memory", "1000Mi"}}, {}}},
       kDefaultResources,
       {80, 30}},
      {"bypass extended resource if the pod does not request",
       pod12,
       {{{{"cpu", "6000"}, {"memory", "10000"}}, {}},
        {{{"cpu", "6000"}, {"memory", "10000"}, {kExtendedRes, "4"}}, {}}},
       kExtendedResourceSet,
       {50, 50}},
      {"honor extended resource if the pod request",
       reqPod({{"cpu", "3000"}, {"memory", "5000"}, {kExtendedRes, "2"}}),
       {{{{"cpu", "6000"}, {"memory", "10000"}, {kExtendedRes, "4"}}, {}},
        {{{"cpu", "6000"}, {"memory", "10000"}, {kExtendedRes, "10"}}, {}}},
       kExtendedResourceSet,
       {50, 40}},
      {"if the node doesn't have a resource",
       reqPod({{"cpu", "3000"}, {"memory", "4000"}}),
       {{{{"cpu", "6000"}, {"memory", "10000"}}, {}},
        {{{"cpu", "6000"}, {"memory", "10000"}, {kExtendedRes, "4"}}, {}}},
       {{kExtendedRes, 2}, {"cpu", 1}, {"memory", 1}},
       {45, 45}},
  };
  runFitScoreCases(ScoringStrategy::Type::MostAllocated, cases);
}

TEST(NodeResourcesFit, RequestedToCapacityRatioScores) {
  const std::vector<UtilizationShapePoint> leastShape = {{0, 10}, {100, 0}};
  auto empty = PodBuilder().info();
  std::vector<ScoreCase> cases = {
      {"nothing scheduled, nothing requested (default - least requested nodes have priority)",
       empty,
       {{{{"cpu", "4000"}, {"memory", "10000"}}, {empty, empty}},
        {{{"cpu", "4000"}, {"memory", "10000"}}, {}}},
       kDefaultResources,
       {100, 100}},
      {"nothing scheduled, resources requested, differently sized nodes (default - least "
       "requested nodes have priority)",
       reqPod({{"cpu", "1000"}, {"memory", "2000"}}, {{"cpu", "2000"}, {"memory", "3000"}}),
       {{{{"cpu", "4000"}, {"memory", "10000"}}, {empty, empty}},
        {{{"cpu", "6000"}, {"memory", "10000"}}, {}}},
       kDefaultResources,
       {38, 50}},
      {"no resources requested, pods scheduled with resources (default - least requested nodes "
       "have priority)",
       empty,
       {{{{"cpu", "4000"}, {"memory", "10000"}}, {reqPod({{"cpu", "3000"}, {"memory", "5000"}})}},
        {{{"cpu", "6000"}, {"memory", "10000"}}, {reqPod({{"cpu", "3000"}, {"memory", "5000"}})}}},
       kDefaultResources,
       {38, 50}},
  };
  runFitScoreCases(ScoringStrategy::Type::RequestedToCapacityRatio, cases, leastShape);
}

// makeNode(name, 4000 milli-CPU, 10000Mi, extended) of upstream's bin-packing tests.
Requests binPackingNode(Requests extended) {
  extended["cpu"] = "4000m";
  extended["memory"] = std::to_string(int64_t{10000} * 1024 * 1024);
  return extended;
}

// Allocatable past int64 nanos' reach: "1e1000" saturates, and 90Pi of memory times 100 no longer
// fits int64. Upstream's int64 arithmetic wraps there (the huge node scored 0, 90Pi 8, 100Pi 18,
// 1000Pi 50); berth's 128-bit arithmetic keeps upstream's results wherever they do not wrap.
TEST(NodeResourcesFit, HugeNodesScoreWithoutOverflow) {
  auto pod = reqPod({{"cpu", "500m"}, {"memory", "64Mi"}});
  const std::vector<NodeSpec> nodes = {
      {{{"cpu", "1e1000"}, {"memory", "1e1000"}}, {}},
      {{{"cpu", "100000"}, {"memory", "90Pi"}}, {}},
      {{{"cpu", "100000"}, {"memory", "100Pi"}}, {}},
      {{{"cpu", "100000"}, {"memory", "1000Pi"}}, {}},
      // An ordinary node scores as before: cpu 87, memory 99.
      {{{"cpu", "4"}, {"memory", "16Gi"}}, {}},
  };
  runFitScoreCases(ScoringStrategy::Type::LeastAllocated,
                   {{"least allocated", pod, nodes, kDefaultResources, {99, 99, 99, 99, 93}}});
  runFitScoreCases(ScoringStrategy::Type::MostAllocated,
                   {{"most allocated", pod, nodes, kDefaultResources, {0, 0, 0, 0, 6}}});
  // A pod as large as the saturated node fills it; requests past it count as full.
  auto whole = reqPod({{"cpu", "1e1000"}, {"memory", "1e1000"}});
  runFitScoreCases(ScoringStrategy::Type::MostAllocated,
                   {{"most allocated, a saturated pod",
                     whole,
                     {{{{"cpu", "1e1000"}, {"memory", "1e1000"}}, {}},
                      {{{"cpu", "1e1000"}, {"memory", "1e1000"}}, {reqPod({{"cpu", "1"}})}}},
                     kDefaultResources,
                     {100, 100}}});
  runFitScoreCases(
      ScoringStrategy::Type::RequestedToCapacityRatio,
      {{"requested to capacity ratio", pod, nodes, kDefaultResources, {100, 100, 100, 100, 94}}},
      {{0, 10}, {100, 0}});
}

// A node whose allocatable saturates negative has nothing left, however much is requested on it.
TEST(NodeResourcesFit, FilterDoesNotOverflowOnSaturatedAllocatable) {
  runFilterCases({{"a negative allocatable never fits",
                   PodBuilder().req({{"cpu", "1m"}}).info(),
                   {{"cpu", "1m"}},
                   {"Insufficient cpu"}}},
                 {{"cpu", "-1e1000"}, {"memory", "1e1000"}, {"pods", "32"}});
}

TEST(NodeResourcesFit, RequestedToCapacityRatioBinPacksExtendedResources) {
  const std::vector<UtilizationShapePoint> shape = {{0, 0}, {100, 1}};
  const auto node1Single = binPackingNode({{"intel.com/foo", "8"}});
  const auto node2Single = binPackingNode({{"intel.com/foo", "4"}});
  auto foo2 = reqPod({{"intel.com/foo", "2"}});
  std::vector<ScoreCase> single = {
      {"nothing scheduled, nothing requested",
       PodBuilder().info(),
       {{node1Single, {}}, {node2Single, {}}},
       {{"intel.com/foo", 1}},
       {0, 0}},
      {"resources requested, pods scheduled with less resources",
       foo2,
       {{node1Single, {PodBuilder().info()}}, {node2Single, {}}},
       {{"intel.com/foo", 1}},
       {2, 5}},
      {"resources requested, pods scheduled with resources, on node with existing pod running",
       foo2,
       {{node1Single, {}}, {node2Single, {foo2}}},
       {{"intel.com/foo", 1}},
       {2, 10}},
      {"resources requested, pods scheduled with more resources",
       reqPod({{"intel.com/foo", "4"}}),
       {{node1Single, {}}, {node2Single, {}}},
       {{"intel.com/foo", 1}},
       {5, 10}},
  };
  runFitScoreCases(ScoringStrategy::Type::RequestedToCapacityRatio, single, shape);

  const auto node1 = binPackingNode({{"intel.com/foo", "8"}, {"intel.com/bar", "4"}});
  const auto node2 = binPackingNode({{"intel.com/foo", "4"}, {"intel.com/bar", "8"}});
  const std::vector<ResourceSpec> weighted = {{"intel.com/foo", 3}, {"intel.com/bar", 5}};
  std::vector<ScoreCase> multiple = {
      {"nothing scheduled, nothing requested",
       PodBuilder().info(),
       {{node1, {}}, {node2, {}}},
       weighted,
       {0, 0}},
      {"resources requested, pods scheduled with less resources",
       reqPod({{"intel.com/foo", "2"}, {"intel.com/bar", "2"}}),
       {{node1, {}}, {node2, {}}},
       weighted,
       {4, 3}},
  };
  runFitScoreCases(ScoringStrategy::Type::RequestedToCapacityRatio, multiple, shape);
}

TEST(NodeResourcesFit, BrokenLinearFunction) {
  struct Case {
    std::vector<ShapePoint> shape;
    std::vector<std::pair<int64_t, int64_t>> points;  // utilization, expected
  };
  std::vector<Case> cases = {
      {{{10, 1}, {90, 9}},
       {{-10, 1},
        {0, 1},
        {9, 1},
        {10, 1},
        {15, 1},
        {19, 1},
        {20, 2},
        {89, 8},
        {90, 9},
        {99, 9},
        {100, 9},
        {110, 9}}},
      {{{0, 2}, {40, 10}, {100, 0}},
       {{-10, 2}, {0, 2}, {20, 6}, {30, 8}, {40, 10}, {70, 5}, {100, 0}, {110, 0}}},
      {{{0, 2}, {40, 2}, {100, 2}},
       {{-10, 2}, {0, 2}, {20, 2}, {30, 2}, {40, 2}, {70, 2}, {100, 2}, {110, 2}}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    for (const auto& [p, want] : cases[i].points) {
      SCOPED_TRACE("case " + std::to_string(i) + " p=" + std::to_string(p));
      EXPECT_EQ(brokenLinear(cases[i].shape, p), want);
    }
  }
}

// Invalid args are refused once, by the args decoder (the plugin trusts what it is given).
std::string fitArgsError(const char* json) {
  config::Decoder d;
  NodeResourcesFitArgs args;
  decodeNodeResourcesFitArgs(d, config::Json::parse(json), "args", args);
  return d.failed() ? d.error() : "";
}

TEST(NodeResourcesFit, RejectsInvalidScoringArgs) {
  struct Case {
    std::string name;
    const char* args;
    std::string wantMessage;
  };
  std::vector<Case> cases = {
      {"resource with negative weight",
       R"({"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "memory",
           "weight": -1}, {"name": "cpu", "weight": 1}]}})",
       "args.scoringStrategy.resources[0].weight: resource weight of memory not in valid range "
       "(0, 100], got -1"},
      {"resource weight larger than MaxNodeScore",
       R"({"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "memory",
           "weight": 101}]}})",
       "args.scoringStrategy.resources[0].weight: resource weight of memory not in valid range "
       "(0, 100], got 101"},
      {"requested to capacity ratio without a shape",
       R"({"scoringStrategy": {"type": "RequestedToCapacityRatio"}})",
       "args.scoringStrategy.requestedToCapacityRatio: required when type is "
       "RequestedToCapacityRatio"},
      {"shape not increasing",
       R"({"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio":
           {"shape": [{"utilization": 50, "score": 1}, {"utilization": 50, "score": 2}]}}})",
       "args.scoringStrategy.requestedToCapacityRatio.shape[1].utilization: values must be sorted "
       "in increasing order"},
      {"shape score above 10",
       R"({"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio":
           {"shape": [{"utilization": 0, "score": 11}]}}})",
       "args.scoringStrategy.requestedToCapacityRatio.shape[0].score: not in valid range [0, 10], "
       "got 11"},
      {"resource group with a slash", R"({"ignoredResourceGroups": ["example.com/aaa"]})",
       "args.ignoredResourceGroups[0]: resource group name can't contain '/', got "
       "\"example.com/aaa\""},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    EXPECT_EQ(fitArgsError(tc.args), tc.wantMessage);
  }
  // A zero weight is upstream's unset, defaulted to 1.
  NodeResourcesFitArgs args;
  config::Decoder d;
  decodeNodeResourcesFitArgs(d, config::Json::parse(R"({"scoringStrategy": {"type":
      "MostAllocated", "resources": [{"name": "memory", "weight": 1}, {"name": "cpu",
      "weight": 0}]}})"),
                             "args", args);
  EXPECT_FALSE(d.failed());
  EXPECT_EQ(args.scoringStrategy.resources.at(1).weight, 1);
}

TEST(NodeResourcesFit, DefaultProfileScoresLeastAllocated) {
  auto plugin = mustCreate(newFit(NodeResourcesFitArgs{}, {}));
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(plugin->name(), "NodeResourcesFit");
  auto pod = reqPod({{"cpu", "1000"}, {"memory", "2000"}}, {{"cpu", "2000"}, {"memory", "3000"}});
  EXPECT_EQ(scoreAll(*plugin, *pod,
                     {{{{"cpu", "4000"}, {"memory", "10000"}}, {}},
                      {{{"cpu", "6000"}, {"memory", "10000"}}, {}}},
                     true),
            (std::vector<int64_t>{37, 50}));
}

// --- BalancedAllocation --------------------------------------------------------------------------

// BalancedAllocation's args; no resources means the defaults (cpu and memory).
NodeResourcesBalancedAllocationArgs balancedProfile(std::vector<ResourceSpec> resources) {
  NodeResourcesBalancedAllocationArgs args;
  if (!resources.empty()) args.resources = std::move(resources);
  return args;
}

// makeNode(name, milliCPU, memory, scalars) of upstream's tests.
Requests milliNode(int64_t milliCPU, int64_t memory, Requests scalars = {}) {
  scalars["cpu"] = std::to_string(milliCPU) + "m";
  scalars["memory"] = std::to_string(memory);
  return scalars;
}

TEST(NodeResourcesBalancedAllocation, Scores) {
  auto cpuAndMemory =
      reqPod({{"cpu", "1000m"}, {"memory", "2000"}}, {{"cpu", "2000m"}, {"memory", "3000"}});
  auto cpuOnly = reqPod({{"cpu", "1000m"}, {"memory", "0"}}, {{"cpu", "2000m"}, {"memory", "0"}});
  auto cpuAndMemoryAndGPU = reqPod({{"cpu", "1000m"}, {"memory", "2000"}},
                                   {{"cpu", "2000m"}, {"memory", "3000"}, {"nvidia.com/gpu", "3"}});
  const std::vector<ResourceSpec> withGPU = {{"cpu", 1}, {"memory", 1}, {"nvidia.com/gpu", 1}};
  const Requests gpu8 = {{"nvidia.com/gpu", "8"}};

  struct Case {
    std::string name;
    framework::PodInfoPtr pod;
    std::vector<NodeSpec> nodes;
    std::vector<ResourceSpec> resources;
    bool runPreScore;
    std::vector<int64_t> want;
  };
  std::vector<Case> cases = {
      {"nothing scheduled, resources requested, differently sized nodes",
       cpuAndMemory,
       {{milliNode(4000, 10000), {}}, {milliNode(6000, 10000), {}}},
       kDefaultResources,
       true,
       {87, 100}},
      {"resources requested, pods scheduled with resources",
       cpuAndMemory,
       {{milliNode(10000, 20000), {cpuOnly}}, {milliNode(10000, 20000), {cpuAndMemory}}},
       kDefaultResources,
       true,
       {82, 95}},
      {"resources requested, pods scheduled with resources, differently sized nodes",
       cpuAndMemory,
       {{milliNode(10000, 20000), {cpuOnly}}, {milliNode(10000, 50000), {cpuAndMemory}}},
       kDefaultResources,
       true,
       {82, 80}},
      {"requested resources at node capacity",
       cpuOnly,
       {{milliNode(6000, 10000), {cpuOnly}}, {milliNode(6000, 10000), {cpuAndMemory}}},
       kDefaultResources,
       true,
       {50, 75}},
      {"include scalar resource on a node for balanced resource allocation",
       reqPod({{"memory", "0"}, {"nvidia.com/gpu", "1"}}),
       {{milliNode(3500, 40000, gpu8), {cpuAndMemoryAndGPU}},
        {milliNode(3500, 40000, gpu8), {cpuAndMemory}}},
       withGPU,
       true,
       {70, 65}},
      {"node without the scalar resource should skip the scalar resource",
       cpuAndMemory,
       {{milliNode(3500, 40000, gpu8), {}}, {milliNode(3500, 40000), {}}},
       withGPU,
       true,
       {63, 63}},
      {"resources requested, pods scheduled with resources if PreScore not called",
       cpuAndMemory,
       {{milliNode(10000, 20000), {cpuOnly}}, {milliNode(10000, 20000), {cpuAndMemory}}},
       kDefaultResources,
       false,
       {82, 95}},
      // berth: requests of pods on the node count as set, never as the non-zero defaults.
      {"pods without requests on the node add nothing",
       cpuAndMemory,
       {{milliNode(4000, 10000),
         {PodBuilder().emptyContainer().info(), PodBuilder().emptyContainer().info()}}},
       kDefaultResources,
       true,
       {87}},
      {"empty resources default to cpu and memory",
       cpuAndMemory,
       {{milliNode(4000, 10000), {}}},
       {},
       true,
       {87}},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    auto plugin = mustCreate(newBalancedAllocation(balancedProfile(tc.resources), {}));
    ASSERT_NE(plugin, nullptr);
    EXPECT_EQ(scoreAll(*plugin, *tc.pod, tc.nodes, tc.runPreScore), tc.want);
  }
}

TEST(NodeResourcesBalancedAllocation, SkipsBestEffortPods) {
  struct Case {
    std::string name;
    framework::PodInfoPtr pod;
  };
  std::vector<Case> cases = {
      {"nothing requested", PodBuilder().info()},
      {"containers without requests (no non-zero defaults here)",
       PodBuilder().emptyContainer().info()},
      {"requests only for resources the plugin does not score",
       reqPod({{"ephemeral-storage", "1Gi"}})},
  };
  auto plugin = mustCreate(newBalancedAllocation(balancedProfile(kDefaultResources), {}));
  ASSERT_NE(plugin, nullptr);
  std::vector<NodeSpec> nodes = {{milliNode(4000, 10000), {}}, {milliNode(4000, 10000), {}}};
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    EXPECT_EQ(scoreAll(*plugin, *tc.pod, nodes, true, Code::Skip), std::vector<int64_t>{});
    // Without PreScore, Score gives such a pod 0, as upstream.
    EXPECT_EQ(scoreAll(*plugin, *tc.pod, nodes, false), (std::vector<int64_t>{0, 0}));
  }
}

TEST(NodeResourcesBalancedAllocation, RejectsInvalidArgs) {
  auto error = [](const char* json) {
    config::Decoder d;
    NodeResourcesBalancedAllocationArgs args;
    decodeNodeResourcesBalancedAllocationArgs(d, config::Json::parse(json), "args", args);
    return d.failed() ? d.error() : "";
  };
  EXPECT_EQ(error(R"({"resources": [{"name": "cpu", "weight": 2}, {"name": "memory"}]})"),
            "args.resources[0].weight: must be 1, got 2");
  EXPECT_EQ(error(R"({"resources": [{"name": "cpu"}, {"name": "cpu"}]})"),
            "args.resources[1].name: duplicate resource \"cpu\"");
}

// --- Hot path ------------------------------------------------------------------------------------

TEST(NodeResources, FilterAndScoreDoNotAllocateOnSuccess) {
#ifdef BERTH_TSAN_RUNTIME
  GTEST_SKIP() << "allocations are not counted under ThreadSanitizer";
#endif
  auto fit = mustCreate(newFit(fitProfile(ScoringStrategy::Type::LeastAllocated,
                                          {{"cpu", 1}, {"memory", 1}, {"example.com/gpu", 1}}),
                               {}));
  auto rtcr = mustCreate(newFit(
      fitProfile(ScoringStrategy::Type::RequestedToCapacityRatio, {}, {{0, 0}, {50, 10}, {100, 5}}),
      {}));
  auto balanced = mustCreate(newBalancedAllocation(
      balancedProfile({{"cpu", 1}, {"memory", 1}, {"example.com/gpu", 1}}), {}));
  ASSERT_TRUE(fit && rtcr && balanced);
  auto pod = reqPod({{"cpu", "1"}, {"memory", "1Gi"}, {"example.com/gpu", "1"}});
  auto node = scoringNode({{"cpu", "8"}, {"memory", "16Gi"}, {"example.com/gpu", "4"}},
                          {reqPod({{"cpu", "2"}, {"memory", "2Gi"}})});

  // One cycle state per plugin: two Fit instances never share a profile.
  framework::CycleState states[3];
  framework::PreFilterResult result;
  ASSERT_TRUE(dynamic_cast<framework::PreFilterPlugin&>(*fit)
                  .preFilter(states[0], *pod, result)
                  .isSuccess());
  const framework::Plugin* plugins[3] = {fit.get(), rtcr.get(), balanced.get()};
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(dynamic_cast<const framework::PreScorePlugin&>(*plugins[i])
                    .preScore(states[i], *pod, {&node})
                    .isSuccess());
  }

  int64_t scores[3] = {};
  g_allocations = 0;
  g_count_allocations = true;
  bool fits =
      dynamic_cast<framework::FilterPlugin&>(*fit).filter(states[0], *pod, node).isSuccess();
  for (int i = 0; i < 3; ++i) {
    fits = dynamic_cast<const framework::ScorePlugin&>(*plugins[i])
               .score(states[i], *pod, node, scores[i])
               .isSuccess() &&
           fits;
  }
  g_count_allocations = false;
  EXPECT_TRUE(fits);
  EXPECT_EQ(g_allocations.load(), 0);
  // cpu 3/8 -> 62, memory 3/16 -> 81, gpu 1/4 -> 75.
  EXPECT_EQ(scores[0], (62 + 81 + 75) / 3);
  EXPECT_GT(scores[1], 0);
  EXPECT_GT(scores[2], 0);
}

}  // namespace
}  // namespace berth::plugins::noderesources
