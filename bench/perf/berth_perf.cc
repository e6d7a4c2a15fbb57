// berth-perf: a scheduler_perf-like end-to-end benchmark through real HTTP. Starts the embedded API
// server with N nodes, runs the real `berth` daemon in its own process against it, creates M
// pending pods as fast as possible and waits until every one is bound. Then measures the same
// server's raw binding rate driven by the same client library (the physical limit here), and the
// rate of a binding plus its Scheduled event (the daemon's own writes per pod, with no scheduling).
//
//   berth-perf [--workload NAME] [--nodes N] [--init-pods N] [--pods M] [--config FILE] [--json]
//
// Workloads are modelled on scheduler_perf's (test/integration/scheduler_perf): `basic` (identical
// pods owned by one ReplicaSet, SchedulingBasic), `anti-affinity` (required, hostname),
// `affinity` (required, zone, one zone), `preferred-affinity`, `preferred-anti-affinity`
// (hostname, weight 1), `spread` and `preferred-spread` (zone maxSkew 5, DoNotSchedule /
// ScheduleAnyway, 3 zones). Their init pods are created already bound, where the scheduler would
// have put them, before the daemon starts; only the measured pods are scheduled.

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cmd/berth/flags.h"
#include "pkg/apiserver/server.h"
#include "pkg/apiserver/store.h"
#include "pkg/client/rest.h"

extern char** environ;

namespace berth::perf {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using apiserver::Resource;

json makeNode(int i, const std::string& zone) {
  std::string name = "node-" + std::to_string(i);
  json allocatable = {{"cpu", "32"}, {"memory", "128Gi"}, {"pods", "110"}};
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

// One workload: its default sizes, each node's zone, where init pod i is bound, and how a pod of
// the workload differs from the plain template.
struct Workload {
  std::string name;
  int64_t nodes = 5000;
  int64_t initPods = 0;
  int64_t pods = 5000;
  std::function<std::string(int node)> zone = [](int i) { return "zone-" + std::to_string(i % 3); };
  std::function<void(json& pod)> shape = [](json&) {};
  std::function<int(int init, int nodes)> initNode = [](int i, int nodes) { return i % nodes; };
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

int run(const std::vector<std::string>& args) {
  std::string workloadName = "basic";
  int64_t nodes = -1;
  int64_t initPods = -1;
  int64_t pods = -1;
  bool asJson = false;
  std::string configPath;
  std::string berthBinary = BERTH_BINARY;
  cmd::FlagSet flags;
  flags.addString("workload", &workloadName,
                  "basic, anti-affinity, affinity, preferred-affinity, preferred-anti-affinity, "
                  "spread or preferred-spread");
  flags.addInt("nodes", &nodes, "Nodes in the cluster (default: the workload's)");
  flags.addInt("init-pods", &initPods,
               "Pods bound before the daemon starts (default: the workload's)");
  flags.addInt("pods", &pods, "Pending pods to create and wait for (default: the workload's)");
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
  const Workload& workload = *found;
  if (nodes < 0) nodes = workload.nodes;
  if (initPods < 0) initPods = workload.initPods;
  if (pods < 0) pods = workload.pods;
  auto shaped = [&](const std::string& name, const std::string& scheduler, const std::string& ns) {
    json pod = makePod(name, scheduler, ns);
    workload.shape(pod);
    return pod;
  };

  client::initializeClientThreads(2);  // before any cpprestsdk use
  apiserver::StoreOptions storeOptions;
  storeOptions.historySize = static_cast<size_t>(pods + initPods) * 3 + 1000;
  apiserver::Store store(storeOptions);
  for (int i = 0; i < nodes; ++i)
    (void)store.create(Resource::Nodes, "", makeNode(i, workload.zone(i)));
  (void)store.create(
      Resource::ReplicaSets, "perf",
      {{"apiVersion", "apps/v1"},
       {"kind", "ReplicaSet"},
       {"metadata", {{"name", "perf"}, {"namespace", "perf"}, {"uid", "perf-rs-uid"}}},
       {"spec", {{"selector", {{"matchLabels", {{"app", "perf"}}}}}}}});
  for (int i = 0; i < initPods; ++i) {
    json pod = shaped("init-" + std::to_string(i), "berth", "sched-setup");
    pod["spec"]["nodeName"] =
        "node-" + std::to_string(workload.initNode(i, static_cast<int>(nodes)));
    (void)store.create(Resource::Pods, "sched-setup", pod);
  }
  auto server = apiserver::Server::start(store, {});
  if (!server.ok()) {
    std::cerr << "Error: " << server.error().message << "\n";
    return 1;
  }

  std::string dir = "/tmp/berth-perf-" + std::to_string(getpid());
  std::string kubeconfig = dir + "-kubeconfig";
  std::ofstream(kubeconfig) << json{
      {"apiVersion", "v1"},
      {"kind", "Config"},
      {"clusters", {{{"name", "perf"}, {"cluster", {{"server", (*server)->url()}}}}}},
      {"users", {{{"name", "perf"}, {"user", json::object()}}}},
      {"contexts", {{{"name", "perf"}, {"context", {{"cluster", "perf"}, {"user", "perf"}}}}}},
      {"current-context", "perf"}}.dump();
  // The daemon writes no client-side limit of its own here: kube-api-qps is set high so the
  // benchmark measures scheduling and the wire, as scheduler_perf does.
  std::vector<std::string> daemonArgs = {berthBinary,      "run",    "--kubeconfig",     kubeconfig,
                                         "--kube-api-qps", "100000", "--kube-api-burst", "100000"};
  if (!configPath.empty()) {
    daemonArgs.push_back("--config");
    daemonArgs.push_back(configPath);
  }
  std::vector<char*> argv;
  for (std::string& a : daemonArgs) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string logPath = dir + ".log";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  pid_t pid = 0;
  if (posix_spawn(&pid, berthBinary.c_str(), &actions, nullptr, argv.data(), environ) != 0) {
    std::cerr << "Error: cannot start " << berthBinary << "\n";
    return 1;
  }
  posix_spawn_file_actions_destroy(&actions);

  // Ready when every informer watches: pods, nodes, the five kinds the inter-pod plugins read,
  // PodDisruptionBudgets and the six storage kinds.
  constexpr int kDaemonWatches = 14;
  auto readyBy = Clock::now() + std::chrono::seconds(60);
  while ((*server)->activeWatches() < kDaemonWatches && Clock::now() < readyBy) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

  apiserver::WatchOptions watchOptions;
  watchOptions.resourceVersion = store.resourceVersion();
  auto watch = store.watch(Resource::Pods, "perf", watchOptions);
  if (!watch.ok()) {
    std::cerr << "Error: watch: " << watch.error().status.message << "\n";
    kill(pid, SIGTERM);
    return 1;
  }
  std::unordered_map<std::string, Clock::time_point> createdAt;
  createdAt.reserve(static_cast<size_t>(pods));
  std::vector<double> latenciesMs;
  Clock::time_point firstBind{}, lastBind{};
  std::atomic<bool> creating{true};
  std::vector<std::pair<std::string, Clock::time_point>> created(static_cast<size_t>(pods));
  std::thread creator([&] {
    for (int i = 0; i < pods; ++i) {
      std::string name = "pod-" + std::to_string(i);
      created[static_cast<size_t>(i)] = {name, Clock::now()};
      (void)store.create(Resource::Pods, "perf", shaped(name, "berth", "perf"));
    }
    creating = false;
  });
  int bound = 0;
  auto deadline = Clock::now() + std::chrono::seconds(600);
  std::unordered_map<std::string, bool> seen;
  while (bound < pods && Clock::now() < deadline && watch.ok()) {
    auto event = (*watch)->next(std::chrono::milliseconds(200));
    if (!event || event->type != apiserver::WatchEvent::Type::Modified) continue;
    const json& object = event->object;
    if (object["spec"].value("nodeName", "").empty()) continue;
    std::string name = object["metadata"].value("name", "");
    if (seen[name]) continue;
    seen[name] = true;
    auto now = Clock::now();
    if (bound == 0) firstBind = now;
    lastBind = now;
    ++bound;
    size_t index = static_cast<size_t>(std::stoi(name.substr(4)));
    latenciesMs.push_back(
        std::chrono::duration<double, std::milli>(now - created[index].second).count());
  }
  creator.join();
  long rssKiB = peakRssKiB(pid);
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);

  double span = std::chrono::duration<double>(lastBind - firstBind).count();
  double podsPerSecond = span > 0 ? static_cast<double>(bound - 1) / span : 0;
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
  if (asJson) {
    std::cout << result.dump() << "\n";
  } else {
    std::cout << workload.name << ": nodes " << nodes << ", init pods " << initPods << ", pods "
              << pods << ": " << bound << " bound, " << podsPerSecond
              << " pods/s (first to last bind), p50 " << result["p50_ms"] << " ms, p99 "
              << result["p99_ms"] << " ms create-to-bound, daemon peak RSS "
              << result["daemon_peak_rss_mib"] << " MiB; raw binding rate " << raw.binds
              << "/s, with each binding's Scheduled event " << raw.bindsAndEvents << " pods/s\n";
  }
  std::remove(kubeconfig.c_str());
  return bound == pods ? 0 : 1;
}

}  // namespace
}  // namespace berth::perf

int main(int argc, char** argv) {
  return berth::perf::run(std::vector<std::string>(argv + 1, argv + argc));
}
