// `berth demo`: the README's first command. Starts the embedded API server on loopback with a
// sample cluster, runs the real daemon against it over HTTP, creates berth's pods in queue order,
// prints each placement or failure as it happens, adds a node that the pod which fits nowhere and
// the replica blocked by anti-affinity can take, creates a high-priority pod that fits only by
// preempting the batch pod on that node, shows a WaitForFirstConsumer claim provisioned for the
// node berth chose (the demo plays the provisioner) and a pod following its zonal volume, and ends
// with a summary table.

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <iomanip>
#include <iostream>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cmd/berth/common.h"
#include "cmd/berth/demo_volumes.h"
#include "cmd/berth/flags.h"
#include "cmd/berth/run.h"
#include "pkg/api/decode.h"
#include "pkg/api/encode.h"
#include "pkg/apiserver/kubelet_stand_in.h"
#include "pkg/apiserver/server.h"
#include "pkg/apiserver/store.h"
#include "pkg/util/uuid.h"

namespace berth::cmd {

extern const char* const kDemoCluster;  // examples/cluster.yaml, compiled in

namespace {

using json = nlohmann::json;

// The node added once every pod had its first attempt: big enough for batch/big-batch, and a node
// without a frontend replica.
constexpr const char* kExtraNode = R"({
  "apiVersion": "v1", "kind": "Node",
  "metadata": {"name": "node-c1", "labels": {"kubernetes.io/hostname": "node-c1",
               "topology.kubernetes.io/zone": "zone-c"}},
  "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"},
             "capacity": {"cpu": "16", "memory": "64Gi", "pods": "110"}}
})";

// Fits only on node-c1, and only once batch/big-batch (priority 0) is evicted: berth has no
// PriorityClass admission, so the priority is set as upstream's admission would resolve it.
constexpr const char* kPreemptor = R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "checkout-surge", "namespace": "shop"},
  "spec": {"schedulerName": "berth", "priority": 100000,
           "containers": [{"name": "checkout", "image": "nginx",
                           "resources": {"requests": {"cpu": "10", "memory": "4Gi"}}}]}
})";
constexpr const char* kPreemptorName = "shop/checkout-surge";

// The frontend replica that finds no node without a replica until node-c1 joins.
constexpr const char* kBlockedReplica = "shop/frontend-6b7f9c-r9c3d";

std::string podName(const api::Pod& pod) {
  return pod.metadata.namespace_ + "/" + pod.metadata.name;
}

// Prints the daemon's decisions as they happen and lets the demo wait for them.
class Narrator : public scheduler::Observer {
 public:
  explicit Narrator(std::set<std::string> expected) : waiting_(std::move(expected)) {}

  void bound(const api::Pod& pod, const std::string& node,
             const queue::QueuedPod& queued) override {
    std::lock_guard lock(mu_);
    std::cout << "  bound      " << std::left << std::setw(24) << podName(pod) << " -> " << node
              << "  (attempt " << queued.attempts() << ")\n"
              << std::flush;
    waiting_.erase(podName(pod));
    bound_.insert(podName(pod));
    cv_.notify_all();
  }
  void failed(const api::Pod& pod, const std::string& message) override {
    std::lock_guard lock(mu_);
    std::cout << "  pending    " << std::left << std::setw(24) << podName(pod) << " " << message
              << "\n"
              << std::flush;
    waiting_.erase(podName(pod));
    cv_.notify_all();
  }

  // Waits until `pod` had its first outcome; false on timeout.
  bool waitForOutcome(const std::string& pod, std::chrono::seconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return !waiting_.contains(pod); });
  }
  bool waitForBound(const std::string& pod, std::chrono::seconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return bound_.contains(pod); });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::set<std::string> waiting_;
  std::set<std::string> bound_;
};

// Creates each object of `items` in the store: `encode` turns one into its API JSON.
template <typename T, typename Encode>
util::Result<void> createAll(apiserver::Store& store, apiserver::Resource resource,
                             const std::vector<std::shared_ptr<const T>>& items, Encode encode) {
  for (const auto& item : items) {
    auto r = store.create(resource, item->metadata.namespace_, encode(*item));
    if (!r.ok()) {
      const std::string& ns = item->metadata.namespace_;
      return util::invalidArgument(std::string(apiserver::resourceInfo(resource).kind) + " " +
                                   (ns.empty() ? "" : ns + "/") + item->metadata.name + ": " +
                                   r.error().status.message);
    }
  }
  return {};
}

// Creates the item's status over what the create started it with (a bound claim or volume).
template <typename T, typename Encode>
util::Result<void> restoreStatus(apiserver::Store& store, apiserver::Resource resource,
                                 const std::vector<std::shared_ptr<const T>>& items,
                                 Encode encode) {
  for (const auto& item : items) {
    if (item->status.phase.empty() || item->status.phase == "Pending") continue;
    const std::string& ns = item->metadata.namespace_;
    auto r = store.updateStatus(resource, ns, item->metadata.name, encode(*item));
    if (!r.ok()) {
      return util::invalidArgument(std::string(apiserver::resourceInfo(resource).kind) + " " +
                                   (ns.empty() ? "" : ns + "/") + item->metadata.name + ": " +
                                   r.error().status.message);
    }
  }
  return {};
}

// The storage objects of the cluster file, claims and volumes with their phase.
util::Result<void> loadStorage(apiserver::Store& store, const api::ObjectSet& objects) {
  using apiserver::Resource;
  util::Result<void> r =
      createAll(store, Resource::StorageClasses, objects.storageClasses, api::encodeStorageClass);
  if (r.ok()) r = createAll(store, Resource::CSIDrivers, objects.csiDrivers, api::encodeCSIDriver);
  if (r.ok()) r = createAll(store, Resource::CSINodes, objects.csiNodes, api::encodeCSINode);
  if (r.ok()) {
    r = createAll(store, Resource::CSIStorageCapacities, objects.csiStorageCapacities,
                  api::encodeCSIStorageCapacity);
  }
  if (r.ok()) {
    r = createAll(store, Resource::PersistentVolumes, objects.persistentVolumes,
                  api::encodePersistentVolume);
  }
  if (r.ok()) {
    r = restoreStatus(store, Resource::PersistentVolumes, objects.persistentVolumes,
                      api::encodePersistentVolume);
  }
  if (r.ok()) {
    r = createAll(store, Resource::PersistentVolumeClaims, objects.persistentVolumeClaims,
                  api::encodePersistentVolumeClaim);
  }
  if (r.ok()) {
    r = restoreStatus(store, Resource::PersistentVolumeClaims, objects.persistentVolumeClaims,
                      api::encodePersistentVolumeClaim);
  }
  return r;
}

// Namespaces and workloads first, as a cluster has them before their pods.
util::Result<void> load(apiserver::Store& store, const api::ObjectSet& objects) {
  using apiserver::Resource;
  util::Result<void> r =
      createAll(store, Resource::Namespaces, objects.namespaces, api::encodeNamespace);
  if (r.ok()) r = createAll(store, Resource::Services, objects.services, api::encodeService);
  if (r.ok())
    r = createAll(store, Resource::ReplicaSets, objects.replicaSets, api::encodeReplicaSet);
  if (r.ok())
    r = createAll(store, Resource::StatefulSets, objects.statefulSets, api::encodeStatefulSet);
  if (r.ok()) {
    r = createAll(store, Resource::ReplicationControllers, objects.replicationControllers,
                  api::encodeReplicationController);
  }
  if (r.ok()) r = loadStorage(store, objects);
  if (r.ok()) r = createAll(store, Resource::Nodes, objects.nodes, api::encodeNode);
  if (r.ok()) r = createAll(store, Resource::Pods, objects.pods, api::encodePod);
  // Pods are created Pending, as by kube-apiserver: a finished pod then gets its phase back, so
  // that it occupies nothing, as in `berth simulate`.
  for (const api::PodPtr& pod : objects.pods) {
    if (!r.ok() || !api::isTerminal(*pod)) continue;
    auto status = store.updateStatus(Resource::Pods, pod->metadata.namespace_, pod->metadata.name,
                                     api::encodePod(*pod));
    if (!status.ok())
      r = util::invalidArgument("pod " + podName(*pod) + ": " + status.error().status.message);
  }
  return r;
}

// Waits for the Preempted event of a victim (written through either events API) and prints it;
// false on timeout.
bool printPreemptedEvent(apiserver::Store& store, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    for (auto resource : {apiserver::Resource::EventsV1, apiserver::Resource::Events}) {
      auto events = store.list(resource, "");
      if (!events.ok()) continue;
      for (const json& e : events->items) {
        if (e.value("reason", "") != "Preempted") continue;
        const json& about = e.contains("regarding") ? e["regarding"] : e["involvedObject"];
        const std::string note = e.contains("note") ? e.value("note", "") : e.value("message", "");
        std::cout << "  event      " << std::left << std::setw(24)
                  << about.value("namespace", "") + "/" + about.value("name", "")
                  << " Preempted: " << note << "\n"
                  << std::flush;
        return true;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

std::string describe(const json& pod, const std::string& schedulerName) {
  const json& spec = pod["spec"];
  std::string scheduler = spec.value("schedulerName", "");
  std::string scheduled;  // the PodScheduled condition: "True", "False" or ""
  std::string message;
  for (const json& c : pod["status"].value("conditions", json::array())) {
    if (c.value("type", "") == "PodScheduled") {
      scheduled = c.value("status", "");
      message = c.value("message", "");
    }
  }
  if (!spec.value("nodeName", "").empty() && scheduled.empty()) {
    return "placed by spec.nodeName: counted, not scheduled";
  }
  if (scheduler != schedulerName) return "scheduler " + scheduler + ": untouched";
  if (scheduled == "True") return "bound by berth";
  if (scheduled == "False") return "Pending: " + message;
  return "Pending";
}

void printSummary(apiserver::Store& store, const std::string& schedulerName) {
  auto pods = store.list(apiserver::Resource::Pods, "");
  if (!pods.ok()) return;
  std::cout << "\nSummary\n";
  std::cout << std::left << std::setw(32) << "POD" << std::setw(10) << "NODE"
            << "RESULT\n";
  for (const json& pod : pods->items) {
    std::string name =
        pod["metadata"].value("namespace", "") + "/" + pod["metadata"].value("name", "");
    std::string node = pod["spec"].value("nodeName", "");
    std::cout << std::left << std::setw(32) << name << std::setw(10)
              << (node.empty() ? "<none>" : node) << describe(pod, schedulerName) << "\n";
  }
}

}  // namespace

int demoCommand(const std::vector<std::string>& args) {
  std::stop_source stop = stopOnSignals();
  int64_t verbosity = 0;
  std::string bindAddress = "127.0.0.1";
  int64_t port = 10259;
  FlagSet flags;
  flags.addInt("v", &verbosity, "number for the log level verbosity of the daemon");
  flags.addShorthand('v', "v");
  flags.addString("bind-address", &bindAddress,
                  "The IP address on which the daemon serves /metrics and the health checks "
                  "(HTTPS); loopback unless asked, since the demo is a local tool");
  flags.addInt("port", &port,
               "The port on which the daemon serves /metrics and the health checks; 0 picks a "
               "free port");
  const CommandLine cli = flags.parseCommandLine(
      args,
      "Start the embedded API server with a sample cluster, run the berth daemon against it over "
      "HTTP,\nand show each placement and failure as it happens.\n\n"
      "Usage:\n  berth demo [flags]\n\nFlags:\n",
      /*maxArgs=*/0);
  if (cli.exitCode) return *cli.exitCode;
  if (port < 0 || port > 65535) return fail("--port: must be between 0 and 65535");
  log::configure(log::Format::Text, static_cast<int>(verbosity));

  auto objects = api::decodeObjects(kDemoCluster);
  if (!objects.ok()) return fail("demo cluster: " + objects.error().message);
  RunSettings settings;
  settings.config = config::defaultConfiguration();
  settings.serving.bindAddress = bindAddress;
  settings.serving.port = static_cast<uint16_t>(port);
  const std::string& schedulerName = settings.config.profiles.front().schedulerName;
  // The pods for berth are created once the daemon runs, one after another in queue order, so that
  // the daemon attempts them in the order `berth simulate` does and makes the same decisions.
  api::ObjectSet cluster = *objects;
  cluster.pods.clear();
  std::vector<api::PodPtr> ours;
  for (const api::PodPtr& pod : objects->pods) {
    const bool pending = pod->spec.schedulerName == schedulerName && pod->spec.nodeName.empty();
    (pending ? ours : cluster.pods).push_back(pod);
  }
  std::stable_sort(ours.begin(), ours.end(), [](const api::PodPtr& a, const api::PodPtr& b) {
    const int32_t pa = a->spec.priority.value_or(0);
    const int32_t pb = b->spec.priority.value_or(0);
    return pa > pb || (pa == pb && a->metadata.creationTimestamp.value_or(api::Timestamp{}) <
                                       b->metadata.creationTimestamp.value_or(api::Timestamp{}));
  });
  apiserver::Store store;
  store.createSystemNamespaces();  // as kube-apiserver does at startup
  if (auto r = load(store, cluster); !r.ok()) return fail("demo cluster: " + r.error().message);
  if (!createVolumes(store)) return fail("demo cluster: the volume scenario's objects");
  // Preempted pods leave within a second instead of their 30-second grace period.
  apiserver::KubeletStandIn kubelets(store, std::chrono::seconds(1));
  // A token the embedded API server's TokenReview accepts, whose user may read the serving port's
  // paths: the demo's /metrics is scraped exactly as a cluster's Prometheus scrapes berth.
  std::mt19937_64 rng(std::random_device{}());
  const std::string token = "demo-" + util::uuidV4(rng);
  apiserver::ServerOptions serverOptions;
  serverOptions.reviews.tokens.push_back({token, "demo-scraper", "1", {"system:authenticated"}});
  serverOptions.reviews.allow.push_back(
      {"demo-scraper",
       "",
       {"get"},
       {"/metrics", "/metrics/resources", "/configz", "/flagz", "/statusz"}});
  auto server = apiserver::Server::start(store, std::move(serverOptions));
  if (!server.ok()) return fail(server.error().message);

  std::set<std::string> names;
  for (const api::PodPtr& pod : ours) names.insert(podName(*pod));
  names.insert(kPreemptorName);
  Narrator narrator(names);
  settings.observer = &narrator;
  std::cout
      << "berth demo: embedded API server at " << (*server)->url() << " with "
      << cluster.nodes.size() << " nodes, a Deployment's ReplicaSet, a StatefulSet and "
      << cluster.pods.size() << " pods that are not berth's to schedule.\nThe berth daemon "
      << "watches it over HTTP. " << ours.size()
      << " pods with spec.schedulerName: " << schedulerName
      << " are created one after another in queue order (priority, then "
      << "creation time,\nas `berth simulate --cluster examples/cluster.yaml` places them); "
      << "berth binds each to the best node or says why none fits.\nWhile it runs, scrape "
      << "its metrics with a token the embedded API server's TokenReview accepts:\n  curl -sk "
      << "-H 'Authorization: Bearer " << token << "' https://127.0.0.1:" << settings.serving.port
      << "/metrics\n\n";

  client::RestConfig restConfig;
  restConfig.server = (*server)->url();
  int exitCode = 0;
  std::jthread daemon(
      [&](std::stop_token) { exitCode = runDaemon(settings, restConfig, stop.get_token()); });
  for (const api::PodPtr& pod : ours) {
    if (stop.stop_requested()) break;
    auto created =
        store.create(apiserver::Resource::Pods, pod->metadata.namespace_, api::encodePod(*pod));
    if (!created.ok()) {
      std::cout << "  creating " << podName(*pod) << " failed: " << created.error().status.message
                << "\n";
    } else if (!narrator.waitForOutcome(podName(*pod), std::chrono::seconds(30))) {
      std::cout << "  (" << podName(*pod) << " had no outcome within 30 s)\n";
    }
  }
  if (!stop.stop_requested()) {
    std::cout
        << "\nAdding node node-c1 (16 cpu, 64Gi, zone-c) to the cluster: the node-add event "
           "moves unschedulable pods back to the active queue.\nbatch/big-batch fits there, "
           "and so does the fourth frontend replica: no frontend replica runs on node-c1.\n\n";
    auto added = store.create(apiserver::Resource::Nodes, "", json::parse(kExtraNode));
    if (!added.ok())
      std::cout << "  adding node-c1 failed: " << added.error().status.message << "\n";
    for (const char* pod : {"batch/big-batch", kBlockedReplica}) {
      if (!narrator.waitForBound(pod, std::chrono::seconds(30)))
        std::cout << "  (" << pod << " was not bound within 30 s)\n";
    }
  }
  if (!stop.stop_requested()) {
    std::cout << "\nCreating shop/checkout-surge (priority 100000, 10 cpu): only node-c1 could "
                 "hold it, once batch/big-batch (priority 0)\nis evicted. berth preempts it "
                 "asynchronously, nominates node-c1 and binds the pod when the victim is gone:\n\n";
    auto created = store.create(apiserver::Resource::Pods, "shop", json::parse(kPreemptor));
    if (!created.ok()) {
      std::cout << "  creating " << kPreemptorName << " failed: " << created.error().status.message
                << "\n";
    } else {
      if (!printPreemptedEvent(store, std::chrono::seconds(30)))
        std::cout << "  (no Preempted event within 30 s)\n";
      if (!narrator.waitForBound(kPreemptorName, std::chrono::seconds(30)))
        std::cout << "  (" << kPreemptorName << " was not bound within 30 s)\n";
    }
  }
  if (!stop.stop_requested()) {
    showVolumes(
        store, schedulerName,
        [&narrator](const std::string& pod) {
          return narrator.waitForBound(pod, std::chrono::seconds(30));
        },
        stop.get_token());
  }
  std::cout
      << "\nThe frontend replicas (required podAntiAffinity on kubernetes.io/hostname) run one "
         "per node,\nand the cache replicas (topologySpreadConstraints on "
         "topology.kubernetes.io/zone, maxSkew 1) two per zone.\n";
  stop.request_stop();
  daemon.join();
  printSummary(store, schedulerName);
  return exitCode;
}

}  // namespace berth::cmd
