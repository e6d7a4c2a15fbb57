// The in-memory scheduling pipeline on a generated cluster (bench/cluster.h): every pending pod
// goes through PreFilter, Filter on every node, PreScore and Score, and is assumed onto the chosen
// node before the next pod, as the simulator and the daemon do. No I/O, no API server.
//
//   BM_SchedulePods/<nodes>/<pods>/<threads>/<replicas>   pods/s (items_per_second) and us_per_pod;
//       replicas > 1: the pending pods come as ReplicaSets, each template repeated that many times
//   BM_ScheduleReplicaSet/<nodes>/<pods>/<spread>   identical pods of one ReplicaSet (berth-perf's
//       basic workload), so PodTopologySpread's system defaults apply; spread 0 disables the plugin
//   BM_InterPod/<workload>/<measured>   berth-perf's inter-pod workloads (0 anti-affinity,
//       1 affinity, 2 preferred-affinity, 3 preferred-anti-affinity, 4 spread, 5 preferred-spread)
//       in memory: 5,000 nodes, the workload's init pods bound, `measured` pods scheduled; pods/s
//       of the scheduling thread's CPU time
//   BM_SimulateRun/<nodes>/<pods>/<threads>    the same via simulate::run (snapshot build included)
//   BM_SchedulerMemory/<nodes>/<boundPerNode>  heap the scheduler adds per node and per bound pod

#include <benchmark/benchmark.h>
#include <malloc.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>

#include "bench/cluster.h"
#include "pkg/algorithm/generic_scheduler.h"
#include "pkg/config/config.h"
#include "pkg/framework/cluster_objects.h"
#include "pkg/framework/cycle_state.h"
#include "pkg/framework/snapshot.h"
#include "pkg/plugins/registry.h"
#include "pkg/simulate/simulator.h"
#include "pkg/util/parallel.h"

namespace berth::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Bytes in use on the heap, all arenas, including chunks served by mmap.
int64_t heapInUse() {
  struct mallinfo2 mi = mallinfo2();
  return static_cast<int64_t>(mi.uordblks + mi.hblkhd);
}

double peakRssMiB() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

ClusterSpec specFor(const benchmark::State& state) {
  ClusterSpec spec;
  spec.nodes = static_cast<int>(state.range(0));
  spec.pending = static_cast<int>(state.range(1));
  return spec;
}

framework::runtime::FrameworkPtr makeFramework() {
  static const auto registry = plugins::makeInTreeRegistry();
  static const config::Configuration config = config::defaultConfiguration();
  static framework::Handle handle;  // nothing is bound: placements are assumed in the snapshot
  auto fw = framework::runtime::Framework::create(registry, config.profiles.front(), handle);
  if (!fw.ok()) {
    std::fprintf(stderr, "default profile: %s\n", fw.error().message.c_str());
    std::abort();
  }
  return std::move(*fw);
}

framework::Snapshot buildSnapshot(const Cluster& cluster) {
  std::vector<framework::PodInfoPtr> bound;
  bound.reserve(cluster.bound.size());
  for (const auto& p : cluster.bound) bound.push_back(framework::makePodInfo(p));
  return framework::Snapshot::build(cluster.nodes, bound);
}

void BM_SchedulePods(benchmark::State& state) {
  const Cluster cluster = generateCluster(specFor(state));
  const auto fw = makeFramework();
  const int32_t percentage = config::defaultConfiguration().percentageOfNodesToScore;
  util::Parallelizer parallelizer(static_cast<int>(state.range(2)));
  // As ReplicaSets: consecutive pods share a template (they differ in name and uid only).
  std::vector<api::PodPtr> pending = cluster.pending;
  if (const auto replicas = static_cast<size_t>(state.range(3)); replicas > 1) {
    for (size_t i = 0; i < pending.size(); ++i) {
      auto replica = std::make_shared<api::Pod>(*cluster.pending[i - i % replicas]);
      replica->metadata.name = cluster.pending[i]->metadata.name;
      replica->metadata.uid = cluster.pending[i]->metadata.uid;
      pending[i] = std::move(replica);
    }
  }

  // What copying the pending pods costs by itself: assuming a pod copies its api::Pod.
  int64_t podCopyBytes = 0;
  {
    const int64_t before = heapInUse();
    std::vector<api::PodPtr> copies;
    copies.reserve(cluster.pending.size());
    for (const auto& p : cluster.pending) copies.push_back(std::make_shared<api::Pod>(*p));
    podCopyBytes = heapInUse() - before;
  }

  Clock::duration scheduling{};
  int64_t pods = 0, placed = 0, evaluated = 0, assumedBytes = 0;
  uint64_t seed = 1;
  for (auto _ : state) {
    state.PauseTiming();
    auto snapshot = std::make_unique<framework::Snapshot>(buildSnapshot(cluster));
    algorithm::GenericScheduler scheduler(parallelizer, seed++, percentage);
    const int64_t heapBefore = heapInUse();
    state.ResumeTiming();

    const auto start = Clock::now();
    for (const auto& pod : pending) {
      const auto info = framework::makePodInfo(pod);
      framework::CycleState cycle;
      auto out = scheduler.schedulePod(*fw, cycle, *info, *snapshot);
      evaluated += out.evaluatedNodes;
      if (!out.status.isSuccess()) continue;
      auto assumed = std::make_shared<api::Pod>(*pod);
      assumed->spec.nodeName = out.node;
      snapshot->addPod(out.node, framework::makePodInfo(std::move(assumed)));
      ++placed;
    }
    scheduling += Clock::now() - start;
    pods += static_cast<int64_t>(cluster.pending.size());

    state.PauseTiming();
    assumedBytes += heapInUse() - heapBefore;
    snapshot.reset();
    state.ResumeTiming();
  }

  const auto iterations = static_cast<double>(state.iterations());
  state.SetItemsProcessed(pods);
  state.counters["us_per_pod"] =
      std::chrono::duration<double, std::micro>(scheduling).count() / static_cast<double>(pods);
  state.counters["placed"] = static_cast<double>(placed) / iterations;
  state.counters["nodes_per_pod"] = static_cast<double>(evaluated) / static_cast<double>(pods);
  // Heap each placement leaves behind (the assumed pod's copy, its PodInfo, the node's pod list),
  // and the part of it that is the api::Pod copy alone.
  state.counters["assumed_B_per_pod"] =
      placed ? static_cast<double>(assumedBytes) / static_cast<double>(placed) : 0;
  state.counters["pod_copy_B"] =
      static_cast<double>(podCopyBytes) / static_cast<double>(cluster.pending.size());
  state.counters["peak_rss_MiB"] = peakRssMiB();
  state.SetLabel(describe(cluster));
}

// The default profile over `objects`, without PodTopologySpread when `spread` is false.
framework::runtime::FrameworkPtr makeFramework(const framework::ClusterObjects* objects,
                                               bool spread) {
  static const auto registry = plugins::makeInTreeRegistry();
  config::Profile profile = config::defaultConfiguration().profiles.front();
  if (!spread) {
    auto& enabled = profile.plugins.multiPoint.enabled;
    std::erase_if(enabled,
                  [](const config::PluginRef& p) { return p.name == "PodTopologySpread"; });
  }
  framework::Handle handle;
  handle.objects = objects;
  auto fw = framework::runtime::Framework::create(registry, profile, handle);
  if (!fw.ok()) {
    std::fprintf(stderr, "default profile: %s\n", fw.error().message.c_str());
    std::abort();
  }
  return std::move(*fw);
}

void BM_ScheduleReplicaSet(benchmark::State& state) {
  ClusterSpec spec = specFor(state);
  spec.pending = 0;
  const Cluster cluster = generateCluster(spec);
  framework::ClusterObjectStore objects;
  auto rs = std::make_shared<api::ReplicaSet>();
  rs->metadata.name = "perf";
  rs->metadata.namespace_ = "default";
  rs->selector.emplace().matchLabels = {{"app", "perf"}};
  objects.upsert(api::ReplicaSetPtr(rs));
  const auto fw = makeFramework(&objects, state.range(2) != 0);
  const int32_t percentage = config::defaultConfiguration().percentageOfNodesToScore;
  util::Parallelizer parallelizer(1);
  std::vector<api::PodPtr> pending;
  for (int64_t i = 0; i < state.range(1); ++i) {
    auto pod = std::make_shared<api::Pod>();
    pod->metadata.name = "perf-" + std::to_string(i);
    pod->metadata.namespace_ = "default";
    pod->metadata.uid = "perf-uid-" + std::to_string(i);
    pod->metadata.labels = {{"app", "perf"}};
    pod->metadata.ownerReferences = {{"apps/v1", "ReplicaSet", "perf", "rs-uid", true}};
    api::Container c;
    c.name = "c";
    c.resources.requests = {
        {"cpu", resource::Quantity::fromMilli(10)},
        {"memory", resource::Quantity::fromValue(16 << 20, resource::Quantity::Format::BinarySI)}};
    pod->spec.containers.push_back(std::move(c));
    pending.push_back(std::move(pod));
  }

  Clock::duration scheduling{};
  int64_t pods = 0;
  uint64_t seed = 1;
  for (auto _ : state) {
    state.PauseTiming();
    auto snapshot = std::make_unique<framework::Snapshot>(buildSnapshot(cluster));
    algorithm::GenericScheduler scheduler(parallelizer, seed++, percentage);
    state.ResumeTiming();
    const auto start = Clock::now();
    for (const auto& pod : pending) {
      const auto info = framework::makePodInfo(pod);
      framework::CycleState cycle;
      auto out = scheduler.schedulePod(*fw, cycle, *info, *snapshot);
      if (!out.status.isSuccess()) continue;
      auto assumed = std::make_shared<api::Pod>(*pod);
      assumed->spec.nodeName = out.node;
      snapshot->addPod(out.node, framework::makePodInfo(std::move(assumed)));
    }
    scheduling += Clock::now() - start;
    pods += static_cast<int64_t>(pending.size());
    state.PauseTiming();
    snapshot.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(pods);
  state.counters["us_per_pod"] =
      std::chrono::duration<double, std::micro>(scheduling).count() / static_cast<double>(pods);
}

// berth-perf's inter-pod workloads (bench/perf/berth_perf.cc, after scheduler_perf's templates):
// 5,000 nodes of 32 cpu with a hostname and a zone, init pods in "sched-setup" bound round-robin,
// measured pods in "perf" with the same labels and terms.
struct InterPodWorkload {
  const char* name;
  int initPods;
  bool oneZone;  // affinity: every node in zone1
  void (*shape)(api::Pod& pod);
};

constexpr std::string_view kHostnameKey = "kubernetes.io/hostname";
constexpr std::string_view kZoneKey = "topology.kubernetes.io/zone";

api::PodAffinityTerm colorTerm(const std::string& color, std::string_view topologyKey) {
  api::PodAffinityTerm t;
  t.labelSelector.emplace().matchLabels = {{"color", color}};
  t.namespaces = {"perf", "sched-setup"};
  t.topologyKey = std::string(topologyKey);
  return t;
}

void colored(api::Pod& pod, const std::string& color) {
  pod.metadata.labels = {{"color", color}, {"name", "test"}};
}

void spreadShape(api::Pod& pod, const char* when) {
  colored(pod, "blue");
  api::TopologySpreadConstraint c;
  c.maxSkew = 5;
  c.topologyKey = std::string(kZoneKey);
  c.whenUnsatisfiable = when;
  c.labelSelector.emplace().matchLabels = {{"color", "blue"}};
  pod.spec.topologySpreadConstraints = {c};
}

const InterPodWorkload kInterPodWorkloads[] = {
    {"anti-affinity", 1000, false,
     [](api::Pod& pod) {
       colored(pod, "green");
       pod.spec.affinity.emplace()
           .podAntiAffinity.emplace()
           .requiredDuringSchedulingIgnoredDuringExecution = {colorTerm("green", kHostnameKey)};
     }},
    {"affinity", 5000, true,
     [](api::Pod& pod) {
       colored(pod, "blue");
       pod.spec.affinity.emplace()
           .podAffinity.emplace()
           .requiredDuringSchedulingIgnoredDuringExecution = {colorTerm("blue", kZoneKey)};
     }},
    {"preferred-affinity", 5000, false,
     [](api::Pod& pod) {
       colored(pod, "red");
       pod.spec.affinity.emplace()
           .podAffinity.emplace()
           .preferredDuringSchedulingIgnoredDuringExecution = {{1, colorTerm("red", kHostnameKey)}};
     }},
    {"preferred-anti-affinity", 5000, false,
     [](api::Pod& pod) {
       colored(pod, "yellow");
       pod.spec.affinity.emplace()
           .podAntiAffinity.emplace()
           .preferredDuringSchedulingIgnoredDuringExecution = {
           {1, colorTerm("yellow", kHostnameKey)}};
     }},
    {"spread", 5000, false, [](api::Pod& pod) { spreadShape(pod, "DoNotSchedule"); }},
    {"preferred-spread", 5000, false, [](api::Pod& pod) { spreadShape(pod, "ScheduleAnyway"); }},
};

std::shared_ptr<api::Pod> interPodPod(const InterPodWorkload& w, const std::string& name,
                                      const std::string& ns) {
  auto pod = std::make_shared<api::Pod>();
  pod->metadata.name = name;
  pod->metadata.namespace_ = ns;
  pod->metadata.uid = ns + "-" + name;
  api::Container c;
  c.name = "app";
  c.resources.requests = {
      {"cpu", resource::Quantity::fromMilli(100)},
      {"memory", resource::Quantity::fromValue(128 << 20, resource::Quantity::Format::BinarySI)}};
  pod->spec.containers.push_back(std::move(c));
  w.shape(*pod);
  return pod;
}

void BM_InterPod(benchmark::State& state) {
  const InterPodWorkload& w = kInterPodWorkloads[state.range(0)];
  constexpr int kNodes = 5000;
  std::vector<api::NodePtr> nodes;
  for (int i = 0; i < kNodes; ++i) {
    auto n = std::make_shared<api::Node>();
    n->metadata.name = "node-" + std::to_string(i);
    n->metadata.labels = {
        {std::string(kHostnameKey), n->metadata.name},
        {std::string(kZoneKey), w.oneZone ? "zone1" : "zone-" + std::to_string(i % 3)}};
    n->status.allocatable = {
        {"cpu", resource::Quantity::fromMilli(32000)},
        {"memory",
         resource::Quantity::fromValue(int64_t{128} << 30, resource::Quantity::Format::BinarySI)},
        {"pods", resource::Quantity::fromValue(110)}};
    n->status.capacity = n->status.allocatable;
    nodes.push_back(std::move(n));
  }
  std::vector<framework::PodInfoPtr> bound;
  for (int i = 0; i < w.initPods; ++i) {
    auto pod = interPodPod(w, "init-" + std::to_string(i), "sched-setup");
    pod->spec.nodeName = nodes[static_cast<size_t>(i % kNodes)]->metadata.name;
    bound.push_back(framework::makePodInfo(std::move(pod)));
  }
  std::vector<api::PodPtr> pending;
  for (int64_t i = 0; i < state.range(1); ++i) {
    pending.push_back(interPodPod(w, "pod-" + std::to_string(i), "perf"));
  }
  framework::ClusterObjectStore objects;
  for (const char* ns : {"perf", "sched-setup"}) {
    auto n = std::make_shared<api::Namespace>();
    n->metadata.name = ns;
    objects.upsert(api::NamespacePtr(n));
  }
  const auto fw = makeFramework(&objects, true);
  const int32_t percentage = config::defaultConfiguration().percentageOfNodesToScore;
  util::Parallelizer parallelizer(1);

  int64_t pods = 0, placed = 0;
  uint64_t seed = 1;
  for (auto _ : state) {
    state.PauseTiming();
    auto snapshot = std::make_unique<framework::Snapshot>(framework::Snapshot::build(nodes, bound));
    algorithm::GenericScheduler scheduler(parallelizer, seed++, percentage);
    state.ResumeTiming();
    for (const auto& pod : pending) {
      const auto info = framework::makePodInfo(pod);
      framework::CycleState cycle;
      auto out = scheduler.schedulePod(*fw, cycle, *info, *snapshot);
      if (!out.status.isSuccess()) continue;
      auto assumed = std::make_shared<api::Pod>(*pod);
      assumed->spec.nodeName = out.node;
      snapshot->addPod(out.node, framework::makePodInfo(std::move(assumed)));
      ++placed;
    }
    pods += static_cast<int64_t>(pending.size());
    state.PauseTiming();
    snapshot.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(pods);
  state.counters["placed"] = static_cast<double>(placed) / static_cast<double>(state.iterations());
  state.SetLabel(w.name);
}

void BM_SimulateRun(benchmark::State& state) {
  const Cluster cluster = generateCluster(specFor(state));
  api::ObjectSet objects;
  objects.nodes = cluster.nodes;
  objects.pods = cluster.bound;
  objects.pods.insert(objects.pods.end(), cluster.pending.begin(), cluster.pending.end());
  const config::Configuration config = config::defaultConfiguration();
  util::Parallelizer parallelizer(static_cast<int>(state.range(2)));
  simulate::Options options;

  Clock::duration elapsed{};
  int64_t placed = 0;
  for (auto _ : state) {
    const auto start = Clock::now();
    auto report = simulate::run(objects, config, options, parallelizer);
    elapsed += Clock::now() - start;
    if (!report.ok()) {
      state.SkipWithError(report.error().message.c_str());
      return;
    }
    for (const auto& r : report->results) placed += r.node.has_value();
    benchmark::DoNotOptimize(report);
  }
  const auto iterations = static_cast<double>(state.iterations());
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(cluster.pending.size()));
  state.counters["us_per_pod"] = std::chrono::duration<double, std::micro>(elapsed).count() /
                                 (static_cast<double>(cluster.pending.size()) * iterations);
  state.counters["placed"] = static_cast<double>(placed) / iterations;
  state.counters["peak_rss_MiB"] = peakRssMiB();
}

// Heap the scheduler's structures add on top of the decoded objects: NodeInfos and the snapshot's
// index per node, PodInfos and the nodes' pod lists per bound pod. The decoded objects themselves
// (input_B_*) are reported for scale.
void BM_SchedulerMemory(benchmark::State& state) {
  ClusterSpec spec;
  spec.nodes = static_cast<int>(state.range(0));
  spec.boundPerNode = static_cast<int>(state.range(1));
  spec.pending = 0;
  const auto nodes = static_cast<double>(spec.nodes);

  int64_t h0 = heapInUse();
  const Cluster nodesOnly = generateCluster({spec.nodes, 0, 0, spec.seed});
  const double inputPerNode = static_cast<double>(heapInUse() - h0) / nodes;
  h0 = heapInUse();
  const Cluster cluster = generateCluster(spec);
  const auto pods = static_cast<double>(cluster.bound.size());
  const double inputPerPod = (static_cast<double>(heapInUse() - h0) - inputPerNode * nodes) / pods;

  double perNode = 0, perPod = 0;
  for (auto _ : state) {
    const int64_t base = heapInUse();
    int64_t nodeBytes = 0;
    {
      framework::Snapshot s = framework::Snapshot::build(cluster.nodes, {});
      nodeBytes = heapInUse() - base;
      benchmark::DoNotOptimize(s);
    }
    {
      framework::Snapshot s = buildSnapshot(cluster);
      perPod = static_cast<double>(heapInUse() - base - nodeBytes) / pods;
      benchmark::DoNotOptimize(s);
    }
    perNode = static_cast<double>(nodeBytes) / nodes;
  }
  state.counters["B_per_node"] = perNode;
  state.counters["B_per_bound_pod"] = perPod;
  state.counters["input_B_per_node"] = inputPerNode;
  state.counters["input_B_per_pod"] = inputPerPod;
  state.counters["peak_rss_MiB"] = peakRssMiB();
  state.SetLabel(describe(cluster));
}

// Smoke (scripts/test.sh) runs BM_SchedulePods/500/ only; 5000/10000 is the target case.
BENCHMARK(BM_SchedulePods)
    ->ArgsProduct({{500}, {1000}, {1, 2}, {1}})
    ->Args({5000, 10000, 1, 1})
    ->Args({5000, 10000, 2, 1})
    ->Args({5000, 10000, 2, 100})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();
BENCHMARK(BM_ScheduleReplicaSet)
    ->Args({5000, 2000, 0})
    ->Args({5000, 2000, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
// CPU time, not wall time: on a loaded machine the scheduling thread waits for a core.
BENCHMARK(BM_InterPod)->ArgsProduct({{0, 1, 2, 3, 4, 5}, {1000}})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SimulateRun)
    ->Args({5000, 10000, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();
BENCHMARK(BM_SchedulerMemory)->Args({5000, 2})->Args({5000, 10})->Iterations(1);

}  // namespace
}  // namespace berth::bench

BENCHMARK_MAIN();
