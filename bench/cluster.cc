#include "bench/cluster.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <random>
#include <string_view>

namespace berth::bench {
namespace {

using resource::Quantity;

constexpr int64_t kGi = int64_t{1} << 30;
constexpr int64_t kMi = int64_t{1} << 20;
constexpr std::string_view kPoolLabel = "node.berth.io/pool";
constexpr std::string_view kCoresLabel = "node.berth.io/cpu-cores";
constexpr std::string_view kZoneLabel = "topology.kubernetes.io/zone";
constexpr std::string_view kTypeLabel = "node.kubernetes.io/instance-type";
constexpr std::string_view kGPU = "nvidia.com/gpu";
constexpr std::array<std::string_view, 5> kTeams = {"team-a", "team-b", "team-c", "team-d",
                                                    "team-e"};
constexpr std::array<std::string_view, 3> kFamilies = {"c5", "m5", "r5"};  // 2, 4, 8 GiB per core
constexpr std::array<std::string_view, 3> kZoneSuffixes = {"a", "b", "c"};
constexpr std::array<std::string_view, 2> kRegions = {"eu-west-1", "us-east-1"};
constexpr int64_t kEpochMicros = int64_t{1714550400} * 1000000;  // 2024-05-01T08:00:00Z

Quantity cpu(int64_t milli) { return Quantity::fromMilli(milli); }
Quantity bytes(int64_t b) { return Quantity::fromValue(b, Quantity::Format::BinarySI); }
Quantity count(int64_t n) { return Quantity::fromValue(n); }

std::string sizeName(int cores) {
  switch (cores) {
    case 4:
      return "xlarge";
    case 8:
      return "2xlarge";
    case 16:
      return "4xlarge";
    default:
      return "8xlarge";
  }
}

std::string numbered(std::string_view prefix, int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%05d", i);
  return std::string(prefix) + buf;
}

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}

  double uniform() { return std::uniform_real_distribution<double>(0, 1)(rng_); }
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  template <typename T, size_t N>
  const T& pickFrom(const std::array<T, N>& a) {
    return a[static_cast<size_t>(pick(static_cast<int>(N)))];
  }
  std::string zone() {
    return std::string(pickFrom(kRegions)) + std::string(pickFrom(kZoneSuffixes));
  }
  std::string uid() {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(rng_()),
                  static_cast<unsigned>(rng_() & 0xffff), static_cast<unsigned>(rng_() & 0xffff),
                  static_cast<unsigned>(rng_() & 0xffff),
                  static_cast<unsigned long long>(rng_() & 0xffffffffffffULL));
    return buf;
  }

  api::NodePtr node(int i);
  api::PodPtr daemonPod(const api::Node& node, int i);
  api::PodPtr appPod(int i, const std::string& nodeName);

 private:
  void setRequests(api::Container& c, int64_t milliCPU, int64_t memory);
  void addConstraints(api::Pod& pod);

  std::mt19937_64 rng_;
};

api::NodePtr Generator::node(int i) {
  auto n = std::make_shared<api::Node>();
  auto& m = n->metadata;
  m.name = numbered("node-", i);
  m.uid = uid();
  m.resourceVersion = std::to_string(1000 + i);
  m.creationTimestamp = api::Timestamp{kEpochMicros - int64_t{86400} * 1000000 + i};

  // Pools: 60% general, 10% batch, 10% memory, 15% dedicated to a team, 5% GPU; the last two
  // (20%) carry a NoSchedule taint.
  const double r = uniform();
  std::string pool;
  std::string family = std::string(pickFrom(kFamilies));
  int cores = 4 << pick(4);  // 4, 8, 16, 32
  int gpus = 0;
  if (r < 0.60) {
    pool = "general";
  } else if (r < 0.70) {
    pool = "batch";
    family = "c5";
  } else if (r < 0.80) {
    pool = "memory";
    family = "r5";
  } else if (r < 0.95) {
    std::string team(pickFrom(kTeams));
    pool = "dedicated-" + team;
    n->spec.taints.push_back({"dedicated", team, "NoSchedule"});
    m.labels["dedicated"] = team;
  } else {
    pool = "gpu";
    family = "p3";
    cores = 8 << pick(3);
    gpus = 4;
    n->spec.taints.push_back({"gpu", "true", "NoSchedule"});
    m.labels["nvidia.com/gpu.product"] = pick(2) ? "Tesla-V100" : "Tesla-T4";
  }
  const int64_t gibPerCore = family == "c5" ? 2 : family == "r5" ? 8 : 4;
  const int64_t memGi = std::clamp<int64_t>(cores * gibPerCore, 16, 128);
  const std::string zone = this->zone();

  m.labels["kubernetes.io/hostname"] = m.name;
  m.labels["kubernetes.io/os"] = "linux";
  m.labels["kubernetes.io/arch"] = uniform() < 0.9 ? "amd64" : "arm64";
  m.labels["topology.kubernetes.io/region"] = zone.substr(0, zone.size() - 1);
  m.labels[std::string(kZoneLabel)] = zone;
  m.labels[std::string(kTypeLabel)] = family + "." + sizeName(cores);
  m.labels[std::string(kPoolLabel)] = pool;
  m.labels[std::string(kCoresLabel)] = std::to_string(cores);
  m.labels["karpenter.sh/capacity-type"] = uniform() < 0.3 ? "spot" : "on-demand";
  m.annotations["node.alpha.kubernetes.io/ttl"] = "0";
  m.annotations["volumes.kubernetes.io/controller-managed-attach-detach"] = "true";

  auto& st = n->status;
  st.capacity = {{"cpu", cpu(cores * 1000)},
                 {"memory", bytes(memGi * kGi)},
                 {"pods", count(110)},
                 {"ephemeral-storage", bytes(100 * kGi)}};
  // Allocatable is capacity minus system and kubelet reservations.
  st.allocatable = {{"cpu", cpu(cores * 1000 - 80 - 10 * cores)},
                    {"memory", bytes(memGi * kGi - 1536 * kMi)},
                    {"pods", count(110)},
                    {"ephemeral-storage", bytes(90 * kGi)}};
  if (gpus > 0) {
    st.capacity[std::string(kGPU)] = count(gpus);
    st.allocatable[std::string(kGPU)] = count(gpus);
  }
  st.conditions = {{"MemoryPressure", "False", "KubeletHasSufficientMemory", ""},
                   {"DiskPressure", "False", "KubeletHasNoDiskPressure", ""},
                   {"PIDPressure", "False", "KubeletHasSufficientPID", ""},
                   {"Ready", "True", "KubeletReady", "kubelet is posting ready status"}};
  st.images = {{{"registry.k8s.io/kube-proxy:v1.29.4"}, 28 * kMi},
               {{"quay.io/prometheus/node-exporter:v1.7.0"}, 11 * kMi},
               {{"docker.io/library/nginx:1.25"}, 67 * kMi}};
  return n;
}

void Generator::setRequests(api::Container& c, int64_t milliCPU, int64_t memory) {
  c.resources.requests = {{"cpu", cpu(milliCPU)}, {"memory", bytes(memory)}};
  c.resources.limits = {{"cpu", cpu(milliCPU * 2)}, {"memory", bytes(memory * 2)}};
}

// A node-exporter-like DaemonSet pod: tolerates every taint and holds host port 9100.
api::PodPtr Generator::daemonPod(const api::Node& node, int i) {
  auto p = std::make_shared<api::Pod>();
  auto& m = p->metadata;
  m.name = "node-exporter-" + numbered("", i);
  m.namespace_ = "monitoring";
  m.uid = uid();
  m.labels = {{"app.kubernetes.io/name", "node-exporter"}, {"controller-revision-hash", "6d8f7"}};
  m.ownerReferences = {{"apps/v1", "DaemonSet", "node-exporter", "ds-uid-1", true}};
  m.creationTimestamp = api::Timestamp{kEpochMicros - 3600000000LL + i};
  p->spec.schedulerName = "default-scheduler";
  p->spec.nodeName = node.metadata.name;
  p->spec.tolerations = {{"", "Exists", "", "", std::nullopt}};
  api::Container c;
  c.name = "node-exporter";
  c.image = "quay.io/prometheus/node-exporter:v1.7.0";
  setRequests(c, 100, 128 * kMi);
  c.ports = {{"metrics", 9100, 9100, "TCP", ""}};
  p->spec.containers.push_back(std::move(c));
  p->spec.priority = 2000001000;
  p->spec.priorityClassName = "system-node-critical";
  p->status.phase = "Running";
  return p;
}

// Node selectors and required affinity (30%), tolerations (20%), preferred affinity (10%),
// GPUs (1%, inside the first two) and host ports (2%).
void Generator::addConstraints(api::Pod& pod) {
  auto& spec = pod.spec;
  auto& c = spec.containers.front();
  if (uniform() < 0.01) {
    spec.nodeSelector[std::string(kPoolLabel)] = "gpu";
    spec.tolerations.push_back({"gpu", "Exists", "", "NoSchedule", std::nullopt});
    c.resources.requests[std::string(kGPU)] = count(1);
    c.resources.limits[std::string(kGPU)] = count(1);
    return;
  }
  std::string team;
  if (uniform() < 0.19 / 0.99) {
    if (uniform() < 0.7) {
      team = pickFrom(kTeams);
      spec.tolerations.push_back({"dedicated", "Equal", team, "NoSchedule", std::nullopt});
    } else {
      spec.tolerations.push_back({"dedicated", "Exists", "", "NoSchedule", std::nullopt});
    }
    // Default NoExecute tolerations, as the DefaultTolerationSeconds admission plugin adds them.
    spec.tolerations.push_back(
        {"node.kubernetes.io/not-ready", "Exists", "", "NoExecute", int64_t{300}});
    spec.tolerations.push_back(
        {"node.kubernetes.io/unreachable", "Exists", "", "NoExecute", int64_t{300}});
  }
  if (uniform() < 0.29 / 0.99) {
    using Op = api::NodeSelectorOperator;
    auto required = [&spec](std::vector<api::NodeSelectorTerm> terms) {
      api::NodeAffinity na;
      na.requiredDuringSchedulingIgnoredDuringExecution = api::NodeSelector{std::move(terms)};
      spec.affinity.emplace().nodeAffinity = std::move(na);
    };
    if (!team.empty() && uniform() < 0.5) {
      spec.nodeSelector["dedicated"] = team;  // a team's pod pinned to its own pool
    } else {
      switch (pick(6)) {
        case 0:
          spec.nodeSelector[std::string(kZoneLabel)] = zone();
          break;
        case 1:
          spec.nodeSelector[std::string(kPoolLabel)] = "general";
          spec.nodeSelector["kubernetes.io/arch"] = "amd64";
          break;
        case 2:
          required(
              {{{{std::string(kTypeLabel), Op::In, {"m5.2xlarge", "m5.4xlarge", "c5.4xlarge"}}},
                {}}});
          break;
        case 3:
          required({{{{std::string(kZoneLabel), Op::In, {zone(), zone()}}}, {}},
                    {{{std::string(kPoolLabel), Op::In, {"batch"}}}, {}}});
          break;
        case 4:
          required({{{{std::string(kCoresLabel), Op::Gt, {"7"}},
                      {std::string(kZoneLabel), Op::NotIn, {zone()}}},
                     {}}});
          break;
        default:
          required({{{{std::string(kPoolLabel), Op::In, {"memory", "general"}},
                      {"karpenter.sh/capacity-type", Op::NotIn, {"spot"}}},
                     {}}});
          break;
      }
    }
  }
  if (uniform() < 0.10) {
    if (!spec.affinity) spec.affinity.emplace().nodeAffinity.emplace();
    spec.affinity->nodeAffinity->preferredDuringSchedulingIgnoredDuringExecution.push_back(
        {1 + pick(100),
         {{{std::string(kZoneLabel), api::NodeSelectorOperator::In, {zone()}}}, {}}});
  }
  if (uniform() < 0.02) {
    static constexpr std::array<int32_t, 3> kPorts = {8080, 8443, 9000};
    int32_t port = pickFrom(kPorts);
    c.ports.push_back({"http", port, port, "TCP", ""});
  }
}

// A Deployment's pod; bound when nodeName is set (then without constraints, as they already held).
api::PodPtr Generator::appPod(int i, const std::string& nodeName) {
  static constexpr std::array<int64_t, 8> kCPU = {100, 200, 250, 500, 750, 1000, 1500, 2000};
  static constexpr std::array<int64_t, 7> kMemMi = {128, 256, 512, 1024, 2048, 3072, 4096};
  auto p = std::make_shared<api::Pod>();
  auto& m = p->metadata;
  const int app = pick(400);
  const std::string appName = "app-" + std::to_string(app);
  m.name = appName + "-7f9c6b8d4-" + numbered("", i);
  m.namespace_ = "ns-" + std::to_string(app % 20);
  m.uid = uid();
  m.resourceVersion = std::to_string(500000 + i);
  m.labels = {{"app", appName}, {"pod-template-hash", "7f9c6b8d4"}, {"tier", "backend"}};
  m.ownerReferences = {{"apps/v1", "ReplicaSet", appName + "-7f9c6b8d4", uid(), true}};
  m.creationTimestamp = api::Timestamp{kEpochMicros + int64_t{i} * 1000};
  p->spec.schedulerName = "berth";
  p->spec.nodeName = nodeName;
  api::Container c;
  c.name = "main";
  c.image = "registry.example.com/" + appName + ":v1";
  int64_t milli = pickFrom(kCPU);
  int64_t mem = pickFrom(kMemMi) * kMi;
  if (!nodeName.empty()) {
    milli = std::min<int64_t>(milli, 1000);  // bound pods fit even the smallest node twice
    mem = std::min<int64_t>(mem, 2048 * kMi);
  }
  setRequests(c, milli, mem);
  p->spec.containers.push_back(std::move(c));
  if (uniform() < 0.2) {
    api::Container sidecar;
    sidecar.name = "envoy";
    sidecar.image = "docker.io/envoyproxy/envoy:v1.29.2";
    setRequests(sidecar, 50, 64 * kMi);
    p->spec.containers.push_back(std::move(sidecar));
  }
  if (nodeName.empty()) {
    addConstraints(*p);
    p->status.phase = "Pending";
  } else {
    p->status.phase = "Running";
  }
  return p;
}

}  // namespace

Cluster generateCluster(const ClusterSpec& spec) {
  Generator g(spec.seed);
  Cluster c;
  c.nodes.reserve(static_cast<size_t>(spec.nodes));
  for (int i = 0; i < spec.nodes; ++i) c.nodes.push_back(g.node(i));
  int next = 0;
  for (int i = 0; i < spec.nodes; ++i) {
    const api::Node& node = *c.nodes[static_cast<size_t>(i)];
    for (int k = 0; k < spec.boundPerNode; ++k) {
      c.bound.push_back(k == 0 ? g.daemonPod(node, i) : g.appPod(next++, node.metadata.name));
    }
  }
  for (int i = 0; i < spec.pending; ++i) c.pending.push_back(g.appPod(next++, ""));
  return c;
}

std::string describe(const Cluster& c) {
  size_t tainted = 0, gpuNodes = 0, selector = 0, tolerating = 0, gpuPods = 0, ports = 0;
  for (const auto& n : c.nodes) {
    tainted += !n->spec.taints.empty();
    gpuNodes += n->status.allocatable.contains(std::string(kGPU));
  }
  for (const auto& p : c.pending) {
    const auto& s = p->spec;
    selector += !s.nodeSelector.empty() ||
                (s.affinity && s.affinity->nodeAffinity &&
                 s.affinity->nodeAffinity->requiredDuringSchedulingIgnoredDuringExecution);
    tolerating += !s.tolerations.empty();
    gpuPods += s.containers.front().resources.requests.contains(std::string(kGPU));
    ports += !s.containers.front().ports.empty();
  }
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%zu nodes (%zu tainted, %zu GPU), %zu bound pods, %zu pending pods (%zu with "
                "selector/required affinity, %zu with tolerations, %zu GPU, %zu host port)",
                c.nodes.size(), tainted, gpuNodes, c.bound.size(), c.pending.size(), selector,
                tolerating, gpuPods, ports);
  return buf;
}

}  // namespace berth::bench
