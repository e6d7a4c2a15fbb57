// `berth demo`: the README's first command. Starts the embedded API server on loopback with a
// sample cluster, runs the real daemon against it over HTTP, prints each placement or failure as
// it happens, adds a node that the pod which fits nowhere needs, and ends with a summary table.

#include <chrono>
#include <condition_variable>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "cmd/berth/common.h"
#include "cmd/berth/flags.h"
#include "cmd/berth/run.h"
#include "pkg/api/decode.h"
#include "pkg/apiserver/server.h"
#include "pkg/apiserver/store.h"

namespace berth::cmd {

extern const char* const kDemoCluster;  // examples/cluster.yaml, compiled in

namespace {

using json = nlohmann::json;

// The node added once every pod had its first attempt: big enough for batch/big-batch.
constexpr const char* kExtraNode = R"({
  "apiVersion": "v1", "kind": "Node",
  "metadata": {"name": "node-c1", "labels": {"kubernetes.io/hostname": "node-c1",
               "topology.kubernetes.io/zone": "zone-c"}},
  "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"},
             "capacity": {"cpu": "16", "memory": "64Gi", "pods": "110"}}
})";

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

  // Waits until every expected pod had an outcome; false on timeout.
  bool waitForFirstOutcomes(std::chrono::seconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return waiting_.empty(); });
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

util::Result<size_t> load(apiserver::Store& store, const api::ObjectSet& objects) {
  for (const api::NodePtr& node : objects.nodes) {
    auto r = store.create(apiserver::Resource::Nodes, "", api::encodeNode(*node));
    if (!r.ok())
      return util::invalidArgument("node " + node->metadata.name + ": " + r.error().status.message);
  }
  for (const api::PodPtr& pod : objects.pods) {
    auto r =
        store.create(apiserver::Resource::Pods, pod->metadata.namespace_, api::encodePod(*pod));
    if (!r.ok())
      return util::invalidArgument("pod " + podName(*pod) + ": " + r.error().status.message);
  }
  return objects.nodes.size();
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
  FlagSet flags;
  flags.addInt("v", &verbosity, "number for the log level verbosity of the daemon");
  const CommandLine cli = flags.parseCommandLine(
      args,
      "Start the embedded API server with a sample cluster, run the berth daemon against it over "
      "HTTP,\nand show each placement and failure as it happens.\n\n"
      "Usage:\n  berth demo [flags]\n\nFlags:\n",
      /*maxArgs=*/0);
  if (cli.exitCode) return *cli.exitCode;
  log::configure(log::Format::Text, static_cast<int>(verbosity));

  auto objects = api::decodeObjects(kDemoCluster);
  if (!objects.ok()) return fail("demo cluster: " + objects.error().message);
  apiserver::Store store;
  store.createSystemNamespaces();  // as kube-apiserver does at startup
  if (auto r = load(store, *objects); !r.ok()) return fail("demo cluster: " + r.error().message);
  auto server = apiserver::Server::start(store, {});
  if (!server.ok()) return fail(server.error().message);

  RunSettings settings;
  settings.config = config::defaultConfiguration();
  const std::string& schedulerName = settings.config.profiles.front().schedulerName;
  std::set<std::string> ours;
  for (const api::PodPtr& pod : objects->pods) {
    if (pod->spec.schedulerName == schedulerName && pod->spec.nodeName.empty())
      ours.insert(podName(*pod));
  }
  Narrator narrator(ours);
  settings.observer = &narrator;
  std::cout << "berth demo: embedded API server at " << (*server)->url() << " with "
            << objects->nodes.size() << " nodes and " << objects->pods.size() << " pods, "
            << ours.size() << " of them pending for berth (spec.schedulerName: " << schedulerName
            << ").\nThe berth daemon watches them over HTTP and binds each to the best node:\n\n";

  client::RestConfig restConfig;
  restConfig.server = (*server)->url();
  int exitCode = 0;
  std::jthread daemon(
      [&](std::stop_token) { exitCode = runDaemon(settings, restConfig, stop.get_token()); });
  if (!narrator.waitForFirstOutcomes(std::chrono::seconds(30))) {
    std::cout << "  (some pods had no outcome within 30 s)\n";
  }
  if (!stop.stop_requested()) {
    std::cout << "\nAdding node node-c1 (16 cpu, 64Gi) to the cluster: the node-add event moves "
                 "unschedulable pods back to the active queue.\n\n";
    auto added = store.create(apiserver::Resource::Nodes, "", json::parse(kExtraNode));
    if (!added.ok())
      std::cout << "  adding node-c1 failed: " << added.error().status.message << "\n";
    if (!narrator.waitForBound("batch/big-batch", std::chrono::seconds(30))) {
      std::cout << "  (batch/big-batch was not bound within 30 s)\n";
    }
  }
  stop.request_stop();
  daemon.join();
  printSummary(store, schedulerName);
  return exitCode;
}

}  // namespace berth::cmd
