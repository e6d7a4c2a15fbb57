// berth-perf: a scheduler_perf-like end-to-end benchmark through real HTTP. Starts the embedded API
// server with N nodes, runs the real `berth` daemon in its own process against it, creates M
// pending pods as fast as possible and waits until every one is bound. Then measures the same
// server's raw binding rate driven by the same client library (the physical limit here), and the
// rate of a binding plus its Scheduled event (the daemon's own writes per pod, with no scheduling).
//
//   berth-perf [--workload NAME] [--nodes N] [--init-pods N] [--pods M] [--churn-interval D]
//              [--config FILE] [--json]
//
// Workloads are modelled on scheduler_perf's (test/integration/scheduler_perf): `basic` (identical
// pods owned by one ReplicaSet, SchedulingBasic), `anti-affinity` (required, hostname),
// `affinity` (required, zone, one zone), `preferred-affinity`, `preferred-anti-affinity`
// (hostname, weight 1), `spread` and `preferred-spread` (zone maxSkew 5, DoNotSchedule /
// ScheduleAnyway, 3 zones), and `preemption` (PreemptionAsync: 4-cpu nodes each holding four
// low-priority 900m pods, a high-priority 3-cpu pod created every 200 ms while the measured 100m
// pods are scheduled; each preemptor evicts three or four victims), and `volumes` (every measured
// pod with one claim bound to a zonal CSI volume in its own node's zone, as scheduler_perf's volume
// workloads: the volume plugins run rather than Skip). Their init pods are created
// already bound, where the scheduler would have put them, before the daemon starts; only the
// measured pods (and the preemptors) are scheduled.

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cmd/berth/flags.h"
#include "pkg/apiserver/kubelet_stand_in.h"
#include "pkg/apiserver/server.h"
#include "pkg/apiserver/store.h"
#include "pkg/client/rest.h"
#include "tests/support/berth_process.h"

namespace berth::perf {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using apiserver::Resource;

json makeNode(int i, const std::string& zone, const std::string& cpu, const std::string& memory) {
  std::string name = "node-" + std::to_string(i);
  json allocatable = {{"cpu", cpu}, {"memory", memory}, {"pods", "110"}};
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", name},
            {"labels", {{"kubernetes.io/hostname", name}, {"topology.kubernetes.io/zone", zone}}}}},
          {"status", {{"allocatable", allocatable}, {"capacity", allocatable}}}};
}

json makePod(const std::string& name, const std::string& scheduler,
             const std::string& ns = "perf") {
  json container = {{"name", "app"},
                    {"image", "registry.k8s.io/pause:3.10"},
                    {"resources", {{"requests", {{"cpu", "100m"}, {"memory", "128Mi"}}}}}};
  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}};
  pod["metadata"] = {{"name", name}, {"namespace", ns}};
  pod["spec"] = {{"schedulerName", scheduler}, {"containers", json::array({container})}};
  return pod;
}

// The namespaces scheduler_perf's inter-pod templates name: init pods live in the second.
const json kTermNamespaces = json::array({"perf", "sched-setup"});

json podAffinityTerm(const std::string& color, const std::string& topologyKey) {
  return {{"labelSelector", {{"matchLabels", {{"color", color}}}}},
          {"topologyKey", topologyKey},
          {"namespaces", kTermNamespaces}};
}

void setRequests(json& pod, const std::string& cpu, const std::string& memory) {
  pod["spec"]["containers"][0]["resources"]["requests"] = {{"cpu", cpu}, {"memory", memory}};
}

// One workload: its default sizes, each node's size and zone, where init pod i is bound, how a
// measured pod (`shape`) and an init pod (`initShape`, default `shape`) differ from the plain
// template, and the pods created every `churnInterval` while the measured pods are scheduled
// (scheduler_perf's churn op; none when `churn` is unset).
struct Workload {
  std::string name;
  int64_t nodes = 5000;
  int64_t initPods = 0;
  int64_t pods = 5000;
  std::string nodeCpu = "32";
  std::string nodeMemory = "128Gi";
  std::function<std::string(int node)> zone = [](int i) { return "zone-" + std::to_string(i % 3); };
  std::function<void(json& pod)> shape = [](json&) {};
  std::function<void(json& pod)> initShape{};
  std::function<int(int init, int nodes)> initNode = [](int i, int nodes) { return i % nodes; };
  std::function<void(json& pod)> churn{};
  std::chrono::milliseconds churnInterval{200};
  // What measured pod `name` needs in the store before the daemon starts (its claim and volume).
  std::function<void(apiserver::Store& store, const std::string& name, const std::string& zone)>
      storage{};
};

std::vector<Workload> workloads() {
  const std::string hostname = "kubernetes.io/hostname";
  const std::string zoneKey = "topology.kubernetes.io/zone";
  auto labeled = [](json& pod, const std::string& color) {
    pod["metadata"]["labels"] = {{"color", color}, {"name", "test"}};
  };
  std::vector<Workload> all;
  Workload basic{.name = "basic", .nodes = 5000, .initPods = 0, .pods = 10000};
  // Owned by a ReplicaSet, as a Deployment's pods are: PodTopologySpread's system default
  // constraints then apply to every pod.
  basic.shape = [](json& pod) {
    pod["metadata"]["labels"] = {{"app", "perf"}};
    pod["metadata"]["ownerReferences"] = json::array({{{"apiVersion", "apps/v1"},
                                                       {"kind", "ReplicaSet"},
                                                       {"name", "perf"},
                                                       {"uid", "perf-rs-uid"},
                                                       {"controller", true}}});
  };
  all.push_back(basic);
  Workload anti{.name = "anti-affinity", .nodes = 5000, .initPods = 1000, .pods = 2000};
  anti.shape = [=](json& pod) {
    labeled(pod, "green");
    pod["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] =
        json::array({podAffinityTerm("green", hostname)});
  };
  all.push_back(anti);
  Workload affinity{.name = "affinity", .nodes = 5000, .initPods = 5000, .pods = 5000};
  affinity.zone = [](int) { return std::string("zone1"); };
  affinity.shape = [=](json& pod) {
    labeled(pod, "blue");
    pod["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] =
        json::array({podAffinityTerm("blue", zoneKey)});
  };
  all.push_back(affinity);
  for (const char* kind : {"podAffinity", "podAntiAffinity"}) {
    const bool anti = std::string(kind) == "podAntiAffinity";
    Workload w{.name = anti ? "preferred-anti-affinity" : "preferred-affinity",
               .nodes = 5000,
               .initPods = 5000,
               .pods = 5000};
    const std::string color = anti ? "yellow" : "red";
    w.shape = [=](json& pod) {
      labeled(pod, color);
      pod["spec"]["affinity"][kind]["preferredDuringSchedulingIgnoredDuringExecution"] =
          json::array({{{"weight", 1}, {"podAffinityTerm", podAffinityTerm(color, hostname)}}});
    };
    all.push_back(w);
  }
  for (const char* when : {"DoNotSchedule", "ScheduleAnyway"}) {
    const bool hard = std::string(when) == "DoNotSchedule";
    Workload w{.name = hard ? "spread" : "preferred-spread",
               .nodes = 5000,
               .initPods = 5000,
               .pods = 5000};
    w.zone = [](int i) { return "moon-" + std::to_string(i % 3 + 1); };
    w.shape = [=](json& pod) {
      labeled(pod, "blue");
      pod["spec"]["topologySpreadConstraints"] =
          json::array({{{"maxSkew", 5},
                        {"topologyKey", zoneKey},
                        {"whenUnsatisfiable", when},
                        {"labelSelector", {{"matchLabels", {{"color", "blue"}}}}}}});
    };
    all.push_back(w);
  }
  // PreemptionAsync/5000Nodes: the templates node-default (4 cpu, 32Gi), pod-low-priority (900m,
  // 500Mi, no priority, terminationGracePeriodSeconds 0), pod-high-priority (priority 10, 3 cpu)
  // and pod-default (100m, 500Mi).
  Workload preemption{.name = "preemption",
                      .nodes = 5000,
                      .initPods = 20000,
                      .pods = 5000,
                      .nodeCpu = "4",
                      .nodeMemory = "32Gi"};
  preemption.shape = [](json& pod) { setRequests(pod, "100m", "500Mi"); };
  preemption.initShape = [](json& pod) {
    setRequests(pod, "900m", "500Mi");
    pod["spec"]["terminationGracePeriodSeconds"] = 0;
  };
  preemption.churn = [](json& pod) {
    setRequests(pod, "3", "500Mi");
    pod["spec"]["priority"] = 10;
  };
  all.push_back(preemption);
  // scheduler_perf's volume workloads: every measured pod has one claim, bound to a zonal CSI PV
  // (VolumeBinding's node affinity, VolumeZone, NodeVolumeLimits and VolumeRestrictions all run).
  Workload volumes{.name = "volumes", .nodes = 5000, .initPods = 0, .pods = 5000};
  volumes.shape = [](json& pod) {
    const std::string claim = "data-" + pod["metadata"]["name"].get<std::string>();
    pod["spec"]["volumes"] =
        json::array({{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", claim}}}}});
  };
  volumes.storage = [zoneKey](apiserver::Store& store, const std::string& name,
                              const std::string& zone) {
    const std::string claimName = "data-" + name;
    const std::string pvName = "pv-" + name;
    auto claim = store.create(Resource::PersistentVolumeClaims, "perf",
                              {{"apiVersion", "v1"},
                               {"kind", "PersistentVolumeClaim"},
                               {"metadata",
                                {{"name", claimName},
                                 {"namespace", "perf"},
                                 {"annotations", {{"pv.kubernetes.io/bind-completed", "yes"}}}}},
                               {"spec",
                                {{"accessModes", {"ReadWriteOnce"}},
                                 {"storageClassName", "zonal"},
                                 {"volumeName", pvName},
                                 {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}});
    if (!claim.ok()) return;
    (void)store.create(
        Resource::PersistentVolumes, "",
        {{"apiVersion", "v1"},
         {"kind", "PersistentVolume"},
         {"metadata", {{"name", pvName}, {"labels", {{zoneKey, zone}}}}},
         {"spec",
          {{"accessModes", {"ReadWriteOnce"}},
           {"capacity", {{"storage", "1Gi"}}},
           {"storageClassName", "zonal"},
           {"csi", {{"driver", "pd.csi.storage.gke.io"}, {"volumeHandle", pvName}}},
           {"claimRef",
            {{"kind", "PersistentVolumeClaim"},
             {"namespace", "perf"},
             {"name", claimName},
             {"uid", (*claim)["metadata"]["uid"]}}},
           {"nodeAffinity",
            {{"required",
              {{"nodeSelectorTerms",
                {{{"matchExpressions",
                   {{{"key", zoneKey}, {"operator", "In"}, {"values", {zone}}}}}}}}}}}}}}});
  };
  all.push_back(volumes);
  return all;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t at = static_cast<size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(at, values.size() - 1)];
}

long peakRssKiB(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

struct RawRates {
  double binds = 0;           // Bindings per second
  double bindsAndEvents = 0;  // pods per second when each Binding is followed by its event
};

// POSTs Bindings from `threads` threads through one RestClient: the rate the server and the client
// library sustain for the daemon's busiest request, without any scheduling (the physical limit
// here). In alternate rounds, so that the VM's drifting speed weighs on both alike, each Binding is
// followed by the Scheduled event the daemon writes for it: the rate of the daemon's own writes per
// pod, a ceiling for any scheduler on this server.
RawRates rawRates(apiserver::Store& store, const std::string& url, int rounds, int perRound,
                  int threads) {
  const int count = rounds * perRound;
  for (int i = 0; i < count; ++i) {
    (void)store.create(Resource::Pods, "perf", makePod("raw-" + std::to_string(i), "nobody"));
    (void)store.create(Resource::Pods, "perf", makePod("raw-event-" + std::to_string(i), "nobody"));
  }
  client::RestConfig config;
  config.server = url;
  config.qps = 1e9;  // no client-side limit to speak of: this measures the wire
  config.burst = 1 << 30;
  auto rest = client::RestClient::create(config);
  if (!rest.ok()) return {};
  // Seconds taken to write pods [from, from + perRound) of the prefix.
  auto timed = [&](const std::string& prefix, int from, bool withEvent) {
    std::atomic<int> next{from};
    auto start = Clock::now();
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&] {
        for (int i = next++; i < from + perRound; i = next++) {
          std::string name = prefix + std::to_string(i);
          json binding = {{"apiVersion", "v1"},
                          {"kind", "Binding"},
                          {"metadata", {{"name", name}, {"namespace", "perf"}}},
                          {"target", {{"kind", "Node"}, {"name", "node-0"}}}};
          (void)(*rest)->post(client::kPods, "perf", name, "binding", binding);
          if (!withEvent) continue;
          json event = {
              {"apiVersion", "events.k8s.io/v1"},
              {"kind", "Event"},
              {"metadata", {{"name", name + ".187d3f2a9c1b0e00"}, {"namespace", "perf"}}},
              {"eventTime", "2026-12-01T00:00:00.000000Z"},
              {"reportingController", "berth"},
              {"reportingInstance", "berth-perf"},
              {"action", "Binding"},
              {"reason", "Scheduled"},
              {"regarding",
               {{"kind", "Pod"}, {"apiVersion", "v1"}, {"namespace", "perf"}, {"name", name}}},
              {"note", "Successfully assigned perf/" + name + " to node-0"},
              {"type", "Normal"}};
          (void)(*rest)->create(client::kEventsV1, "perf", event);
        }
      });
    }
    for (std::thread& w : workers) w.join();
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  double bindSeconds = 0;
  double bothSeconds = 0;
  for (int r = 0; r < rounds; ++r) {
    bindSeconds += timed("raw-", r * perRound, false);
    bothSeconds += timed("raw-event-", r * perRound, true);
  }
  return {count / bindSeconds, count / bothSeconds};
}

// The daemon ready to schedule: serving (on the free port it picked and logged) and answering
// /readyz with 200, which it does once every informer it runs (pods, nodes and each kind a plugin
// reads) has listed. An error carries the end of the daemon's log.
util::Result<uint16_t> waitUntilReady(test::BerthProcess& daemon, std::chrono::seconds limit) {
  auto failed = [&](const std::string& what) {
    return util::invalidArgument("berth " + what + "; its log ends:\n" + daemon.logTail(3000));
  };
  auto line = daemon.waitForLogLine({"Serving securely"}, limit);
  if (!line) return failed("did not start serving");
  const std::string address = test::logField(*line, "address").value_or("");
  const std::string_view digits = std::string_view(address).substr(address.rfind(':') + 1);
  uint16_t port = 0;
  if (std::from_chars(digits.data(), digits.data() + digits.size(), port).ec != std::errc() ||
      port == 0) {
    return failed("logged no port in \"" + *line + "\"");
  }
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    if (!daemon.running()) return failed("exited");
    auto reply = test::httpsGet(port, "/readyz", {}, std::chrono::seconds(5));
    if (reply.ok() && reply->code == 200) return port;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return failed("was not ready within " + std::to_string(limit.count()) + " s");
}

int run(const std::vector<std::string>& args) {
  std::string workloadName = "basic";
  int64_t nodes = -1;
  int64_t initPods = -1;
  int64_t pods = -1;
  bool asJson = false;
  std::string configPath;
  std::string berthBinary = BERTH_BINARY;
  std::chrono::milliseconds churnInterval{-1};
  cmd::FlagSet flags;
  flags.addString("workload", &workloadName,
                  "basic, anti-affinity, affinity, preferred-affinity, preferred-anti-affinity, "
                  "spread, preferred-spread or preemption");
  flags.addInt("nodes", &nodes, "Nodes in the cluster (default: the workload's)");
  flags.addInt("init-pods", &initPods,
               "Pods bound before the daemon starts (default: the workload's)");
  flags.addInt("pods", &pods, "Pending pods to create and wait for (default: the workload's)");
  flags.addDuration("churn-interval", &churnInterval,
                    "How often the workload's churn pod is created while the measured pods are "
                    "scheduled (default: the workload's; 0: no churn)");
  flags.addString("config", &configPath, "KubeSchedulerConfiguration for the daemon");
  flags.addString("berth", &berthBinary, "The berth binary to run");
  flags.addBool("json", &asJson, "Print one JSON object");
  const cmd::CommandLine cli =
      flags.parseCommandLine(args, "Usage: berth-perf [flags]\n\nFlags:\n");
  if (cli.exitCode) return *cli.exitCode;
  const std::vector<Workload> known = workloads();
  auto found = std::find_if(known.begin(), known.end(),
                            [&](const Workload& w) { return w.name == workloadName; });
  if (found == known.end()) {
    std::cerr << "Error: unknown workload \"" << workloadName << "\"\n";
    return 2;
  }
  Workload workload = *found;
  if (churnInterval.count() == 0) workload.churn = nullptr;
  if (churnInterval.count() > 0) workload.churnInterval = churnInterval;
  if (nodes < 0) nodes = workload.nodes;
  if (initPods < 0) initPods = workload.initPods;
  if (pods < 0) pods = workload.pods;
  if (nodes == 0 && initPods > 0) {
    std::cerr << "Error: --init-pods " << initPods << " needs at least one node\n";
    return 2;
  }
  auto shaped = [&](const std::string& name, const std::string& ns,
                    const std::function<void(json&)>& shape) {
    json pod = makePod(name, "berth", ns);
    shape(pod);
    return pod;
  };

  apiserver::StoreOptions storeOptions;
  // Each pod's claim and volume too, when the workload has them.
  storeOptions.historySize = static_cast<size_t>(pods + initPods) * 3 + 1000 +
                             (workload.storage ? static_cast<size_t>(pods) * 2 : 0);
  apiserver::Store store(storeOptions);
  for (const char* ns : {"perf", "sched-setup"}) {
    (void)store.create(Resource::Namespaces, "",
                       {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}});
  }
  for (int i = 0; i < nodes; ++i) {
    (void)store.create(Resource::Nodes, "",
                       makeNode(i, workload.zone(i), workload.nodeCpu, workload.nodeMemory));
  }
  (void)store.create(
      Resource::ReplicaSets, "perf",
      {{"apiVersion", "apps/v1"},
       {"kind", "ReplicaSet"},
       {"metadata", {{"name", "perf"}, {"namespace", "perf"}, {"uid", "perf-rs-uid"}}},
       {"spec", {{"selector", {{"matchLabels", {{"app", "perf"}}}}}}}});
  if (workload.storage) {
    (void)store.create(Resource::StorageClasses, "",
                       {{"apiVersion", "storage.k8s.io/v1"},
                        {"kind", "StorageClass"},
                        {"metadata", {{"name", "zonal"}}},
                        {"provisioner", "pd.csi.storage.gke.io"},
                        {"volumeBindingMode", "WaitForFirstConsumer"}});
    for (int i = 0; i < pods; ++i) {
      workload.storage(store, "pod-" + std::to_string(i),
                       workload.zone(i % std::max<int>(1, static_cast<int>(nodes))));
    }
  }
  const auto& initShape = workload.initShape ? workload.initShape : workload.shape;
  for (int i = 0; i < initPods; ++i) {
    json pod = shaped("init-" + std::to_string(i), "sched-setup", initShape);
    pod["spec"]["nodeName"] =
        "node-" + std::to_string(workload.initNode(i, static_cast<int>(nodes)));
    (void)store.create(Resource::Pods, "sched-setup", pod);
  }
  auto server = apiserver::Server::start(store, {});
  if (!server.ok()) {
    std::cerr << "Error: " << server.error().message << "\n";
    return 1;
  }
  // Victims are deleted with their own grace period (0 for the preemption workload's); anything
  // deleted gracefully is finalized as a kubelet would, within a second.
  apiserver::KubeletStandIn kubelets(store, std::chrono::seconds(1));

  std::string dir = "/tmp/berth-perf-" + std::to_string(getpid());
  std::string kubeconfig = dir + "-kubeconfig";
  struct Removed {
    const std::string& path;
    ~Removed() { std::remove(path.c_str()); }
  } removeKubeconfig{kubeconfig};
  if (auto written = test::writeKubeconfig(kubeconfig, (*server)->url()); !written.ok()) {
    std::cerr << "Error: " << written.error().message << "\n";
    return 1;
  }
  // The daemon writes no client-side limit of its own here: kube-api-qps is set high so the
  // benchmark measures scheduling and the wire, as scheduler_perf does. It serves on a free port
  // (several berth-perf runs may share a machine) and runs without leader election, as
  // scheduler_perf's scheduler does.
  std::vector<std::string> daemonArgs = {
      "run",    "--kubeconfig", kubeconfig, "--kube-api-qps", "100000",    "--kube-api-burst",
      "100000", "--port",       "0",        "--bind-address", "127.0.0.1", "--leader-elect=false"};
  if (!configPath.empty()) {
    daemonArgs.push_back("--config");
    daemonArgs.push_back(configPath);
  }
  std::string logPath = dir + ".log";
  std::remove(logPath.c_str());
  auto spawned = test::BerthProcess::spawn(berthBinary, daemonArgs, logPath);
  if (!spawned.ok()) {
    std::cerr << "Error: " << spawned.error().message << "\n";
    return 1;
  }
  test::BerthProcess& daemon = **spawned;
  if (auto ready = waitUntilReady(daemon, std::chrono::seconds(300)); !ready.ok()) {
    std::cerr << "Error: " << ready.error().message << "\n";
    return 1;
  }

  apiserver::WatchOptions watchOptions;
  watchOptions.resourceVersion = store.resourceVersion();
  auto watch = store.watch(Resource::Pods, "perf", watchOptions);
  if (!watch.ok()) {
    std::cerr << "Error: watch: " << watch.error().status.message << "\n";
    return 1;
  }
  std::vector<double> latenciesMs;
  Clock::time_point firstBind{}, lastBind{};
  std::vector<Clock::time_point> created(static_cast<size_t>(pods));
  std::thread creator([&] {
    for (int i = 0; i < pods; ++i) {
      created[static_cast<size_t>(i)] = Clock::now();
      (void)store.create(Resource::Pods, "perf",
                         shaped("pod-" + std::to_string(i), "perf", workload.shape));
    }
  });
  // The churn runs until the measured pods are bound; then every pod it made must be bound too.
  std::atomic<bool> measuring{true};
  std::atomic<int> churned{0};
  std::mutex churnMu;
  std::vector<Clock::time_point> churnCreated;  // guarded by churnMu
  std::vector<double> churnLatenciesMs;
  std::thread churner;
  if (workload.churn) {
    churner = std::thread([&] {
      for (auto next = Clock::now(); measuring; next += workload.churnInterval) {
        {
          std::lock_guard lock(churnMu);
          churnCreated.push_back(Clock::now());
        }
        (void)store.create(
            Resource::Pods, "perf",
            shaped("churn-" + std::to_string(churned.load()), "perf", workload.churn));
        ++churned;
        std::this_thread::sleep_until(next + workload.churnInterval);
      }
    });
  }
  int bound = 0;
  int churnBound = 0;
  bool daemonExited = false;
  auto deadline = Clock::now() + std::chrono::seconds(600);
  auto checkedAt = Clock::now();
  std::unordered_map<std::string, bool> seen;
  auto done = [&] { return bound >= pods && (measuring || churnBound >= churned); };
  while (!done() && Clock::now() < deadline && watch.ok()) {
    if (Clock::now() - checkedAt > std::chrono::milliseconds(500)) {
      checkedAt = Clock::now();
      if (!daemon.running()) {
        daemonExited = true;
        break;
      }
    }
    auto event = (*watch)->next(std::chrono::milliseconds(200));
    if (!event || event->type != apiserver::WatchEvent::Type::Modified) continue;
    const json& object = event->object;
    if (object["spec"].value("nodeName", "").empty()) continue;
    std::string name = object["metadata"].value("name", "");
    if (seen[name]) continue;
    seen[name] = true;
    if (name.rfind("churn-", 0) == 0) {
      ++churnBound;
      std::lock_guard lock(churnMu);
      const auto index = static_cast<size_t>(std::stoi(name.substr(6)));
      if (index < churnCreated.size()) {
        churnLatenciesMs.push_back(
            std::chrono::duration<double, std::milli>(Clock::now() - churnCreated[index]).count());
      }
      continue;
    }
    auto now = Clock::now();
    if (bound == 0) firstBind = now;
    lastBind = now;
    ++bound;
    size_t index = static_cast<size_t>(std::stoi(name.substr(4)));
    latenciesMs.push_back(std::chrono::duration<double, std::milli>(now - created[index]).count());
    if (bound == pods) {
      // No churn pod is made after this, so `churned` is final while the rest are awaited.
      measuring = false;
      if (churner.joinable()) churner.join();
    }
  }
  measuring = false;
  creator.join();
  if (churner.joinable()) churner.join();
  const long rssKiB = peakRssKiB(daemon.pid());
  if (!done()) {
    std::cerr << "Error: " << bound << " of " << pods << " pods and " << churnBound << " of "
              << churned << " churn pods bound"
              << (daemonExited ? ": berth exited" : " when the wait ended") << "; its log ends:\n"
              << daemon.logTail(3000) << "\n";
  }
  daemon.terminate();

  double span = std::chrono::duration<double>(lastBind - firstBind).count();
  double podsPerSecond = span > 0 ? static_cast<double>(bound - 1) / span : 0;
  auto initLeft = store.list(Resource::Pods, "sched-setup");
  const int64_t evicted =
      initPods - (initLeft.ok() ? static_cast<int64_t>(initLeft->items.size()) : initPods);
  const RawRates raw = rawRates(store, (*server)->url(), 10, 500, 16);
  json result = {{"workload", workload.name},
                 {"nodes", nodes},
                 {"init_pods", initPods},
                 {"pods", pods},
                 {"bound", bound},
                 {"pods_per_second", podsPerSecond},
                 {"p50_ms", percentile(latenciesMs, 0.50)},
                 {"p99_ms", percentile(latenciesMs, 0.99)},
                 {"daemon_peak_rss_mib", static_cast<double>(rssKiB) / 1024.0},
                 {"raw_bind_per_second", raw.binds},
                 {"raw_bind_and_event_per_second", raw.bindsAndEvents},
                 {"config", configPath.empty() ? "default" : configPath}};
  if (workload.churn) {
    result["churn_interval_ms"] = workload.churnInterval.count();
    result["churn_pods"] = churned.load();
    result["churn_bound"] = churnBound;
    result["churn_p50_ms"] = percentile(churnLatenciesMs, 0.50);
    result["churn_p99_ms"] = percentile(churnLatenciesMs, 0.99);
    result["init_pods_evicted"] = evicted;
  }
  if (asJson) {
    std::cout << result.dump() << "\n";
  } else {
    std::cout << workload.name << ": nodes " << nodes << ", init pods " << initPods << ", pods "
              << pods << ": " << bound << " bound, " << podsPerSecond
              << " pods/s (first to last bind), p50 " << result["p50_ms"] << " ms, p99 "
              << result["p99_ms"] << " ms create-to-bound, daemon peak RSS "
              << result["daemon_peak_rss_mib"] << " MiB; raw binding rate " << raw.binds
              << "/s, with each binding's Scheduled event " << raw.bindsAndEvents << " pods/s";
    if (workload.churn) {
      std::cout << "; churn pods " << churned << " (" << churnBound << " bound, p50 "
                << result["churn_p50_ms"] << " ms, p99 " << result["churn_p99_ms"]
                << " ms create-to-bound), init pods evicted " << evicted;
    }
    std::cout << "\n";
  }
  return done() ? 0 : 1;
}

}  // namespace
}  // namespace berth::perf

int main(int argc, char** argv) {
  return berth::perf::run(std::vector<std::string>(argv + 1, argv + argc));
}
