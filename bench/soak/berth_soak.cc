// berth-soak: a bounded chaos soak of the leader-elected daemon (issue 7; docs/reliability.md).
// Three `berth run --leader-elect` replicas, each talking to its own apiserver::Server over one
// shared Store, schedule a steady stream of pods while nodes come, go, are cordoned and tainted,
// and the servers misbehave: dropped watches, 410 Expired, 5xx bursts, malformed watch lines, slow
// bindings, one 10 s outage of all three servers, and the leader killed with SIGKILL every 60-90 s.
// The soak reads the Store in-process, so it judges what actually landed, and checks continuously:
//   1. no pod bound twice: at most one 201 Binding per pod over the three servers' request logs,
//      and no pod's spec.nodeName ever changes;
//   2. a pending pod that fits somewhere is bound, and one that fits nowhere is reported
//      (FailedScheduling or PodScheduled=False), within --bind-within of the later of its
//      creation, the moment it started to fit, and the end of the last disruption;
//   3. no binding to a node that was gone, cordoned, tainted against the pod, not selected or too
//      full by the Store's own accounting at every instant of the --grace window before it landed;
//   4. the RSS of each replica stays flat after warm-up (least-squares slope in MiB/min);
//   5. no replica exits but by our SIGKILL, or with 1 after losing its lease during a fault.
//
//   berth-soak [--duration 10m] [--nodes 50] [--seed N] [--json] [--report FILE]

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "cmd/berth/flags.h"
#include "pkg/apiserver/server.h"
#include "pkg/apiserver/store.h"
#include "pkg/resource/quantity.h"
#include "tests/support/berth_process.h"

namespace berth::soak {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using Time = Clock::time_point;
using std::chrono::milliseconds;
using namespace std::chrono_literals;
using apiserver::Resource;

constexpr const char* kNamespace = "soak";
constexpr const char* kDiskLabel = "soak.berth.dev/disk";          // "ssd" on every third node
constexpr const char* kDedicatedKey = "soak.berth.dev/dedicated";  // =batch:NoSchedule, fixed
constexpr const char* kChaosKey = "soak.berth.dev/chaos";          // NoSchedule, comes and goes
constexpr int kReplicas = 3;
// Short leader election (lease/renew/retry), so that hand-overs happen within a few seconds.
const std::vector<std::string> kElectionFlags = {
    "--leader-elect", "--leader-elect-lease-duration", "2s",   "--leader-elect-renew-deadline",
    "1500ms",         "--leader-elect-retry-period",   "500ms"};
// A replica that exits 1 after losing its lease is expected only this soon after a fault on its
// server: the renew deadline plus the lease duration plus slack.
constexpr milliseconds kLeaseLossAfterFault = 8s;
constexpr milliseconds kRssInterval = 5s;
// The first RSS samples after a start or a change of role are start-up (informers listing,
// scheduling threads), not growth.
constexpr milliseconds kSegmentWarmup = 30s;
constexpr double kLeakMiBPerMinute = 1.0;
constexpr size_t kExamplesKept = 5;
// How far back the Store's node history is kept to judge a binding made on a stale cache.
constexpr milliseconds kHistoryKept = 5min;

double secondsBetween(Time from, Time to) {
  return std::chrono::duration<double>(to - from).count();
}
int64_t msBetween(Time from, Time to) {
  return std::chrono::duration_cast<milliseconds>(to - from).count();
}

struct Options {
  milliseconds duration = 10min;
  int64_t nodes = 50;
  uint64_t seed = 0;
  bool asJson = false;
  std::string reportPath;
  milliseconds bindWithin = 30s;
  milliseconds grace = 2s;
  milliseconds outageEvery{0};  // 0: one outage, half-way through
  milliseconds outageLength = 10s;
  milliseconds killEvery = 75s;  // mean; each interval is drawn from ±20% of it
  double podsPerSecond = 4;
  std::string berthBinary = BERTH_BINARY;
  bool keepLogs = false;
};

// --- The objects the soak writes
// ------------------------------------------------------------------

// Every node has the same room: 4 CPUs, 16Gi, 30 pods. Every third has an SSD label; every fifth a
// permanent taint that only "tolerating" pods accept.
json makeNode(const std::string& name, int64_t index) {
  json labels = {{"kubernetes.io/hostname", name}};
  if (index % 3 == 0) labels[kDiskLabel] = "ssd";
  json taints = json::array();
  if (index % 5 == 4)
    taints.push_back({{"key", kDedicatedKey}, {"value", "batch"}, {"effect", "NoSchedule"}});
  json allocatable = {{"cpu", "4"}, {"memory", "16Gi"}, {"pods", "30"}};
  json spec = json::object();
  if (!taints.empty()) spec["taints"] = taints;
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"labels", labels}}},
          {"spec", spec},
          {"status", {{"allocatable", allocatable}, {"capacity", allocatable}}}};
}

// The node churn's edits of a node's spec, named in node_stats_ and the chaos log by
// nodeChangeName.
enum class NodeChange { Cordon, Uncordon, Taint, Untaint };
constexpr const char* nodeChangeName(NodeChange change) {
  switch (change) {
    case NodeChange::Cordon:
      return "cordoned";
    case NodeChange::Uncordon:
      return "uncordoned";
    case NodeChange::Taint:
      return "tainted";
    case NodeChange::Untaint:
      return "untainted";
    default:
      return "unknown";
  }
}

enum class PodKind { Plain, Selector, Tolerating, Medium, TooBig };
constexpr const char* kindName(PodKind kind) {
  switch (kind) {
    case PodKind::Plain:
      return "plain";
    case PodKind::Selector:
      return "selector";
    case PodKind::Tolerating:
      return "tolerating";
    case PodKind::Medium:
      return "medium";
    case PodKind::TooBig:
      return "toobig";
    default:
      return "unknown";
  }
}

json makePod(const std::string& name, PodKind kind, std::mt19937_64& rng) {
  auto between = [&rng](int64_t low, int64_t high) {
    return std::uniform_int_distribution<int64_t>(low, high)(rng);
  };
  int64_t milliCpu = between(1, 5) * 100;
  int64_t memoryMi = between(1, 8) * 64;
  if (kind == PodKind::Medium) milliCpu = between(15, 25) * 100;
  if (kind == PodKind::TooBig) milliCpu = 64000;  // 16 times any node
  json container = {
      {"name", "app"},
      {"image", "registry.k8s.io/pause:3.10"},
      {"resources",
       {{"requests",
         {{"cpu", std::to_string(milliCpu) + "m"}, {"memory", std::to_string(memoryMi) + "Mi"}}}}}};
  json spec = {{"schedulerName", "berth"}, {"containers", json::array({container})}};
  if (kind == PodKind::Selector) spec["nodeSelector"] = {{kDiskLabel, "ssd"}};
  if (kind == PodKind::Tolerating) {
    spec["tolerations"] = {{{"key", kDedicatedKey},
                            {"operator", "Equal"},
                            {"value", "batch"},
                            {"effect", "NoSchedule"}},
                           {{"key", kChaosKey}, {"operator", "Exists"}}};
  }
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", kNamespace}}},
          {"spec", spec}};
}

// --- The oracle: the Store's state over time, as read from in-process watches --------------------

struct Amounts {
  int64_t milliCpu = 0;
  int64_t memory = 0;
  int64_t pods = 0;
  Amounts& operator+=(const Amounts& o) {
    milliCpu += o.milliCpu;
    memory += o.memory;
    pods += o.pods;
    return *this;
  }
  Amounts& operator-=(const Amounts& o) {
    milliCpu -= o.milliCpu;
    memory -= o.memory;
    pods -= o.pods;
    return *this;
  }
};

struct Taint {
  std::string key, value, effect;
};
struct Toleration {
  std::string key, op, value, effect;
};

struct NodeView {
  bool exists = false;
  bool unschedulable = false;
  std::map<std::string, std::string> labels;
  std::vector<Taint> taints;
  Amounts allocatable;
};

// A value that changes over time, kept for as long as someone may ask about the past.
template <typename T>
class Timeline {
 public:
  void set(Time at, T value) { entries_.emplace_back(at, std::move(value)); }
  // The value in force at `t`; nullptr before the first.
  const T* at(Time t) const {
    const T* found = nullptr;
    for (const auto& [when, value] : entries_) {
      if (when > t) break;
      found = &value;
    }
    return found;
  }
  const T* latest() const { return entries_.empty() ? nullptr : &entries_.back().second; }
  void changesIn(Time from, Time to, std::vector<Time>& out) const {
    for (const auto& entry : entries_) {
      if (entry.first > from && entry.first <= to) out.push_back(entry.first);
    }
  }
  // Keeps what answers at(t) for every t >= keepFrom.
  void prune(Time keepFrom) {
    while (entries_.size() > 1 && entries_[1].first <= keepFrom) entries_.pop_front();
  }

 private:
  std::deque<std::pair<Time, T>> entries_;
};

// A binding that landed, and the replica whose server answered it 201.
struct Landed {
  Time at;
  Amounts request;
  size_t replica = 0;
};

struct NodeTrack {
  Timeline<NodeView> view;
  Timeline<Amounts> used;  // the requests of the pods bound to it
  Amounts usedNow;
  std::deque<Landed> landed;  // bindings to it whose replica is known, oldest first
};

struct PodView {
  PodKind kind = PodKind::Plain;
  Amounts request;
  std::map<std::string, std::string> selector;
  std::vector<Toleration> tolerations;
  Time created{};
  std::optional<Time> boundAt;
  std::string node;
  std::optional<Time> reportedAt;  // FailedScheduling or PodScheduled=False seen
  std::optional<Time> fitsSince;   // fits some node continuously since then (current state)
  std::optional<Time> deleteAt;
  bool flagged = false;  // already counted as late
};

int64_t quantity(const json& list, const char* name, bool milli) {
  if (!list.is_object() || !list.contains(name) || !list[name].is_string()) return 0;
  auto parsed = resource::Quantity::parse(list[name].get<std::string>());
  if (!parsed.ok()) return 0;
  return milli ? parsed->milliValue() : parsed->value();
}

std::map<std::string, std::string> stringMap(const json& object) {
  std::map<std::string, std::string> out;
  if (!object.is_object()) return out;
  for (const auto& [k, v] : object.items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

NodeView nodeViewOf(const json& node) {
  NodeView view;
  view.exists = true;
  const json spec = node.value("spec", json::object());
  view.unschedulable = spec.value("unschedulable", false);
  for (const json& t : spec.value("taints", json::array())) {
    view.taints.push_back({t.value("key", ""), t.value("value", ""), t.value("effect", "")});
  }
  view.labels = stringMap(node["metadata"].value("labels", json::object()));
  const json allocatable =
      node.value("status", json::object()).value("allocatable", json::object());
  view.allocatable = {quantity(allocatable, "cpu", true), quantity(allocatable, "memory", false),
                      quantity(allocatable, "pods", false)};
  return view;
}

void readPodSpec(const json& pod, PodView& view) {
  const json spec = pod.value("spec", json::object());
  view.request = {0, 0, 1};
  for (const json& c : spec.value("containers", json::array())) {
    const json requests = c.value("resources", json::object()).value("requests", json::object());
    view.request.milliCpu += quantity(requests, "cpu", true);
    view.request.memory += quantity(requests, "memory", false);
  }
  view.selector = stringMap(spec.value("nodeSelector", json::object()));
  for (const json& t : spec.value("tolerations", json::array())) {
    view.tolerations.push_back({t.value("key", ""), t.value("operator", "Equal"),
                                t.value("value", ""), t.value("effect", "")});
  }
}

bool tolerates(const Toleration& toleration, const Taint& taint) {
  if (!toleration.effect.empty() && toleration.effect != taint.effect) return false;
  if (toleration.key.empty()) return toleration.op == "Exists";
  if (toleration.key != taint.key) return false;
  return toleration.op == "Exists" || toleration.value == taint.value;
}

// Why `pod` may not go to the node (nullopt: it may), by the scheduler's default filters that the
// soak's objects exercise: NodeUnschedulable, NodeAffinity (nodeSelector), TaintToleration,
// NodeResourcesFit.
std::optional<std::string> misfit(const PodView& pod, const NodeView& node, const Amounts& used) {
  if (!node.exists) return "node did not exist";
  if (node.unschedulable) return "node was cordoned";
  for (const auto& [key, value] : pod.selector) {
    auto label = node.labels.find(key);
    if (label == node.labels.end() || label->second != value)
      return "node did not match nodeSelector";
  }
  for (const Taint& taint : node.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    const bool tolerated = std::any_of(pod.tolerations.begin(), pod.tolerations.end(),
                                       [&](const Toleration& t) { return tolerates(t, taint); });
    if (!tolerated) return "untolerated taint " + taint.key;
  }
  if (used.milliCpu + pod.request.milliCpu > node.allocatable.milliCpu) return "insufficient cpu";
  if (used.memory + pod.request.memory > node.allocatable.memory) return "insufficient memory";
  if (used.pods + pod.request.pods > node.allocatable.pods) return "too many pods";
  return std::nullopt;
}

// Broken invariants by kind, with the first few examples of each.
class Violations {
 public:
  void add(const std::string& kind, std::string example) {
    ++counts_[kind];
    if (examples_[kind].size() < kExamplesKept) examples_[kind].push_back(std::move(example));
  }
  int total() const {
    int n = 0;
    for (const auto& [kind, count] : counts_) n += count;
    return n;
  }
  json toJson() const {
    json out = json::object();
    for (const auto& [kind, count] : counts_) {
      out[kind] = {{"count", count}, {"examples", examples_.at(kind)}};
    }
    return out;
  }

 private:
  std::map<std::string, int> counts_;
  std::map<std::string, std::vector<std::string>> examples_;
};

// A binding seen in the Store, judged once the request logs tell which replica sent it.
struct PendingCheck {
  std::string name;
  PodView pod;
  std::string node;
  Time landed;
};

// When a replica's watch of a resource was broken by a fault, and when it watched again.
struct WatchBreak {
  Time since;
  std::optional<Time> resumed;
};

struct RssSample {
  Time at;
  double mib = 0;
  int incarnation = 0;
  bool leading = false;
  Time segmentStart;  // when this incarnation took its current role (standby or leader)
};

struct Replica {
  std::unique_ptr<apiserver::Server> server;
  std::string kubeconfig;
  test::BerthProcessPtr process;
  std::string identity;  // the lease holder identity it competes with
  int incarnation = 0;
  Time startedAt{};
  std::optional<Time> restartAt;
  Time faultUntil{};  // the end of the last fault on its server
  Time nextIdentityPoll{};
  std::vector<RssSample> rss;
  size_t requestsSeen = 0;                                // request log records already counted
  std::map<std::string, std::vector<WatchBreak>> breaks;  // by resource: "nodes", "pods"
};

long rssKiB(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

// Least-squares slope of RSS over time, pooled within segments: each incarnation's time as a
// standby and as leader is its own series with its own intercept, so neither a restart's drop nor
// the step of starting to schedule reads as a trend. The first kSegmentWarmup of every segment is
// left out. MiB per minute; nullopt with under `minimumSpanMinutes` of usable samples.
struct Slope {
  std::optional<double> mibPerMinute;
  size_t samples = 0;
  double spanMinutes = 0;
  double maxMib = 0;
};
Slope rssSlope(const std::vector<RssSample>& samples, Time usableFrom, double minimumSpanMinutes) {
  std::map<std::pair<int, bool>, std::vector<std::pair<double, double>>> series;
  Slope out;
  for (const RssSample& s : samples) {
    out.maxMib = std::max(out.maxMib, s.mib);
    if (s.at < usableFrom || s.at - s.segmentStart < kSegmentWarmup) continue;
    series[{s.incarnation, s.leading}].emplace_back(secondsBetween(usableFrom, s.at) / 60.0, s.mib);
  }
  double sxy = 0, sxx = 0;
  for (const auto& [segment, points] : series) {
    if (points.size() < 3) continue;
    double mt = 0, mm = 0;
    for (const auto& [t, m] : points) {
      mt += t;
      mm += m;
    }
    mt /= static_cast<double>(points.size());
    mm /= static_cast<double>(points.size());
    for (const auto& [t, m] : points) {
      sxy += (t - mt) * (m - mm);
      sxx += (t - mt) * (t - mt);
    }
    out.samples += points.size();
    out.spanMinutes += points.back().first - points.front().first;
  }
  if (sxx > 0 && out.spanMinutes >= minimumSpanMinutes) out.mibPerMinute = sxy / sxx;
  return out;
}

struct Distribution {
  std::vector<double> values;
  json toJson() const {
    if (values.empty()) return {{"count", 0}};
    std::vector<double> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    auto at = [&](double p) {
      return sorted[static_cast<size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5)];
    };
    return {{"count", sorted.size()},
            {"min", sorted.front()},
            {"median", at(0.5)},
            {"p99", at(0.99)},
            {"max", sorted.back()}};
  }
};

class Soak {
 public:
  Soak(Options options, std::string logDir)
      : options_(std::move(options)),
        log_dir_(std::move(logDir)),
        rng_(options_.seed),
        chaos_log_(log_dir_ + "/chaos.log") {}

  // Runs the soak; the summary as one JSON object.
  util::Result<json> run();

 private:
  util::Result<void> setUp();
  void step(Time now, bool chaos);
  // What the Store did since the last call, in resourceVersion order.
  void drainWatches(Time now);
  void onPod(const apiserver::WatchEvent& event, Time now);
  void onNode(const apiserver::WatchEvent& event, Time now);
  void onEvent(const apiserver::WatchEvent& event, bool eventsV1, Time now);
  void onLease(const apiserver::WatchEvent& event, Time now);
  // Judges a binding against what the replica that sent it could have known (nullopt: unknown).
  void checkBinding(const PendingCheck& check, std::optional<size_t> replica);
  // The start of the fault-broken watch (nodes or pods) of replica `index` in force at `t`.
  std::optional<Time> staleSince(size_t index, Time t) const;
  void checkDeadlines(Time now);
  // Reads the servers' new request records: Bindings, rewatches; judges bindings now attributable.
  void countBindings(Time now);
  // A fault ended the watches of these replicas; their caches are stale until they watch again.
  void watchesBroken(const std::vector<size_t>& indexes, Time now);
  void superviseReplicas(Time now);
  util::Result<void> spawnReplica(size_t index, Time now);
  int leaderIndex() const;

  void createPod(Time now);
  void deleteDuePods(Time now);
  void churnNodes(Time now);
  void injectFault(Time now);
  void killLeader(Time now);
  void startOutage(Time now);
  // Writes `change` into the Store's node `name`, if it exists; the chaos taint is rewritten by
  // every change: kept (once, last) unless the change is Untaint.
  void setNodeSpec(const std::string& name, NodeChange change);
  // Applies `change` to node `name`, counts it in node_stats_ and logs it as chaos.
  void changeNode(Time now, const std::string& name, NodeChange change);
  // Starts a window in which pods are not judged, until a replica next acquires the lease.
  void suspend(Time now) {
    if (!suspended_) suspended_since_ = now;
    suspended_ = true;
  }
  // Ends the window in which pods are not judged: a new leadership term or a fault's end.
  void disruptionEnded(Time at) { last_disruption_end_ = std::max(last_disruption_end_, at); }
  void chaos(Time now, const std::string& what);
  double since(Time t) const { return secondsBetween(start_, t); }
  template <typename T>
  T uniform(T low, T high) {
    if constexpr (std::is_integral_v<T>) {
      return std::uniform_int_distribution<T>(low, high)(rng_);
    } else {
      return std::uniform_real_distribution<T>(low, high)(rng_);
    }
  }
  milliseconds jitter(milliseconds low, milliseconds high) {
    return milliseconds(uniform<int64_t>(low.count(), high.count()));
  }
  json summary(Time end);

  Options options_;
  std::string log_dir_;
  std::mt19937_64 rng_;
  std::ofstream chaos_log_;
  Time start_{};

  apiserver::Store store_{[] {
    apiserver::StoreOptions o;
    o.historySize = 20000;  // the soak's own watches resume across closeWatches() from here
    return o;
  }()};
  struct OpenWatch {
    Resource resource;
    std::string ns;
    apiserver::WatchPtr watch;
    std::string lastVersion;
  };
  std::vector<OpenWatch> watches_;
  std::vector<Replica> replicas_;

  std::map<std::string, NodeTrack> nodes_;
  std::map<std::string, PodView> pods_;  // live pods (and pods created but not yet seen)
  int64_t next_node_index_ = 0;
  int64_t next_pod_index_ = 0;
  std::map<std::string, int> bindings201_;
  std::map<std::string, size_t> bound_through_;  // pod -> the replica whose Binding got 201
  std::deque<PendingCheck> pending_checks_;

  // Leadership and disruptions.
  std::string holder_;
  std::string acquire_time_;
  Time last_disruption_end_{};
  bool suspended_ = true;  // no leader yet: nothing is judged until the first term
  Time suspended_since_{};
  bool leaderless_reported_ = false;
  std::optional<Time> handover_from_;
  bool handover_after_kill_ = false;  // else after the leader lost its lease or died
  std::optional<Time> outage_until_;
  bool outage_recovering_ = false;
  Time delayed_bindings_until_{};

  // Schedule.
  Time next_create_{}, next_node_event_{}, next_fault_{}, next_kill_{}, next_outage_{},
      next_check_{}, next_count_{}, next_prune_{};

  // Results.
  Violations violations_;
  std::map<std::string, int64_t> pod_stats_, node_stats_, fault_stats_;
  int64_t leader_changes_ = 0, conflicts409_ = 0, binding_errors_ = 0, stale_bindings_ = 0,
          unattributed_bindings_ = 0;
  double max_stale_seconds_ = 0;
  std::vector<std::string> stale_examples_;
  Distribution handover_ms_, lost_lease_handover_ms_, outage_recovery_ms_, time_to_bind_ms_;
  Clock::duration slowest_bind_{};
  std::string slowest_bind_example_;
  json exits_ = json::array();
};

void Soak::chaos(Time now, const std::string& what) {
  std::ostringstream line;
  line << std::fixed << std::setprecision(1) << std::setw(7) << since(now) << "s " << what;
  chaos_log_ << line.str() << "\n";
  chaos_log_.flush();
  if (!options_.asJson) std::cerr << line.str() << "\n";
}

util::Result<void> Soak::setUp() {
  for (const auto& [resource, ns] :
       std::vector<std::pair<Resource, std::string>>{{Resource::Nodes, ""},
                                                     {Resource::Pods, kNamespace},
                                                     {Resource::Events, kNamespace},
                                                     {Resource::EventsV1, kNamespace},
                                                     {Resource::Leases, "kube-system"}}) {
    apiserver::WatchOptions w;
    w.resourceVersion = store_.resourceVersion();
    auto watch = store_.watch(resource, ns, w);
    if (!watch.ok())
      return util::Error{util::ErrorCode::Internal, "watch: " + watch.error().status.message};
    watches_.push_back({resource, ns, *watch, w.resourceVersion});
  }
  for (int64_t i = 0; i < options_.nodes; ++i) {
    std::string name = "node-" + std::to_string(next_node_index_);
    auto created = store_.create(Resource::Nodes, "", makeNode(name, next_node_index_++));
    if (!created.ok())
      return util::Error{util::ErrorCode::Internal,
                         "node " + name + ": " + created.error().status.message};
  }
  for (int i = 0; i < kReplicas; ++i) {
    Replica& r = replicas_.emplace_back();
    apiserver::ServerOptions serverOptions;
    serverOptions.requestLogLimit = 1 << 22;  // counted incrementally: must not rotate
    auto server = apiserver::Server::start(store_, serverOptions);
    if (!server.ok())
      return util::Error{util::ErrorCode::Unavailable,
                         "replica " + std::to_string(i) + " server: " + server.error().message};
    r.server = std::move(*server);
    r.kubeconfig = log_dir_ + "/replica-" + std::to_string(i) + ".kubeconfig";
    auto written = test::writeKubeconfig(r.kubeconfig, r.server->url());
    if (!written.ok()) return written.error();
  }
  return {};
}

util::Result<void> Soak::spawnReplica(size_t index, Time now) {
  Replica& r = replicas_[index];
  ++r.incarnation;
  const std::string log =
      log_dir_ + "/replica-" + std::to_string(index) + "-" + std::to_string(r.incarnation) + ".log";
  std::vector<std::string> args = {"run", "--kubeconfig",   r.kubeconfig, "--v",
                                   "2",   "--bind-address", "127.0.0.1",  "--port",
                                   "0"};
  args.insert(args.end(), kElectionFlags.begin(), kElectionFlags.end());
  auto spawned = test::BerthProcess::spawn(options_.berthBinary, args, log);
  if (!spawned.ok()) return spawned.error();
  r.process = std::move(*spawned);
  r.identity.clear();
  r.startedAt = now;
  r.restartAt.reset();
  chaos(now, "replica " + std::to_string(index) + " started (incarnation " +
                 std::to_string(r.incarnation) + ", pid " + std::to_string(r.process->pid()) + ")");
  return {};
}

int Soak::leaderIndex() const {
  for (size_t i = 0; i < replicas_.size(); ++i) {
    if (!holder_.empty() && replicas_[i].process && replicas_[i].identity == holder_) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

void Soak::drainWatches(Time now) {
  struct Item {
    uint64_t version;
    size_t watch;
    apiserver::WatchEvent event;
  };
  std::vector<Item> items;
  for (size_t i = 0; i < watches_.size(); ++i) {
    OpenWatch& w = watches_[i];
    auto take = [&] {
      for (apiserver::WatchEvent& e : w.watch->drain()) {
        if (e.type == apiserver::WatchEvent::Type::Error ||
            e.type == apiserver::WatchEvent::Type::Bookmark)
          continue;
        w.lastVersion = e.object["metadata"].value("resourceVersion", w.lastVersion);
        items.push_back({std::stoull(w.lastVersion), i, std::move(e)});
      }
    };
    take();
    if (!w.watch->closed()) continue;
    take();  // nothing is queued after closing: this empties it
    // Server::closeWatches() ends every watch of the Store, ours too: resume from where we were.
    apiserver::WatchOptions resume;
    resume.resourceVersion = w.lastVersion;
    auto reopened = store_.watch(w.resource, w.ns, resume);
    if (!reopened.ok()) {
      violations_.add("soak-error", "cannot resume the soak's own watch at resourceVersion " +
                                        w.lastVersion + ": " + reopened.error().status.message);
      continue;
    }
    w.watch = *reopened;
  }
  std::stable_sort(items.begin(), items.end(),
                   [](const Item& a, const Item& b) { return a.version < b.version; });
  // Each event gets its own instant, a nanosecond apart, so that "just before a binding" exists.
  for (size_t k = 0; k < items.size(); ++k) {
    const Item& item = items[k];
    const Time at = now + std::chrono::nanoseconds(k);
    switch (watches_[item.watch].resource) {
      case Resource::Pods:
        onPod(item.event, at);
        break;
      case Resource::Nodes:
        onNode(item.event, at);
        break;
      case Resource::Events:
        onEvent(item.event, false, at);
        break;
      case Resource::EventsV1:
        onEvent(item.event, true, at);
        break;
      case Resource::Leases:
        onLease(item.event, at);
        break;
      default:
        break;
    }
  }
}

void Soak::onNode(const apiserver::WatchEvent& event, Time now) {
  const std::string name = event.object["metadata"].value("name", "");
  NodeTrack& track = nodes_[name];
  track.view.set(now, event.type == apiserver::WatchEvent::Type::Deleted
                          ? NodeView{}
                          : nodeViewOf(event.object));
}

void Soak::onPod(const apiserver::WatchEvent& event, Time now) {
  const json& object = event.object;
  const std::string name = object["metadata"].value("name", "");
  auto it = pods_.find(name);
  if (it == pods_.end()) return;  // deleted already
  PodView& pod = it->second;
  if (event.type == apiserver::WatchEvent::Type::Added) readPodSpec(object, pod);
  const std::string nodeName = object.value("spec", json::object()).value("nodeName", "");
  if (event.type == apiserver::WatchEvent::Type::Deleted) {
    if (pod.boundAt) {
      NodeTrack& track = nodes_[pod.node];
      track.usedNow -= pod.request;
      track.used.set(now, track.usedNow);
    }
    ++pod_stats_[pod.boundAt ? "deleted_bound" : "deleted_pending"];
    pods_.erase(it);
    return;
  }
  if (!nodeName.empty() && !pod.boundAt) {
    pending_checks_.push_back({name, pod, nodeName, now});
    pod.boundAt = now;
    pod.node = nodeName;
    NodeTrack& track = nodes_[nodeName];
    track.usedNow += pod.request;
    track.used.set(now, track.usedNow);
    ++pod_stats_["bound"];
    time_to_bind_ms_.values.push_back(static_cast<double>(msBetween(pod.created, now)));
    if (now - pod.created > slowest_bind_) {
      slowest_bind_ = now - pod.created;
      std::ostringstream text;
      text << std::fixed << std::setprecision(1) << "pod " << name << " (" << kindName(pod.kind)
           << ") created at " << since(pod.created) << "s, bound at " << since(now)
           << "s; fitted some node from " << (pod.fitsSince ? since(*pod.fitsSince) : since(now))
           << "s; reported unschedulable "
           << (pod.reportedAt
                   ? "at " + std::to_string(static_cast<int>(since(*pod.reportedAt))) + "s"
                   : std::string("never"));
      slowest_bind_example_ = text.str();
    }
    // Bound pods live 20-120 s, then go; a pod bound to a node that is gone goes at once, as the
    // pod garbage collector would delete it.
    Time lifetimeEnd = now + jitter(20s, 120s);
    const NodeView* view = track.view.latest();
    if (!view || !view->exists) lifetimeEnd = now + 1s;
    pod.deleteAt = pod.deleteAt ? std::min(*pod.deleteAt, lifetimeEnd) : lifetimeEnd;
  } else if (!nodeName.empty() && nodeName != pod.node) {
    violations_.add("bound-twice",
                    "pod " + name + " moved from node " + pod.node + " to " + nodeName);
  }
  for (const json& c : object.value("status", json::object()).value("conditions", json::array())) {
    if (c.value("type", "") == "PodScheduled" && c.value("status", "") == "False" &&
        !pod.reportedAt) {
      pod.reportedAt = now;
      ++pod_stats_["reported_unschedulable"];
    }
  }
}

void Soak::onEvent(const apiserver::WatchEvent& event, bool eventsV1, Time now) {
  const json& e = event.object;
  if (e.value("reason", "") != "FailedScheduling") return;
  const json regarding = e.value(eventsV1 ? "regarding" : "involvedObject", json::object());
  auto it = pods_.find(regarding.value("name", ""));
  if (it == pods_.end() || it->second.reportedAt) return;
  it->second.reportedAt = now;
  ++pod_stats_["reported_unschedulable"];
}

void Soak::onLease(const apiserver::WatchEvent& event, Time now) {
  const json& lease = event.object;
  if (lease["metadata"].value("name", "") != "berth") return;
  const json spec = lease.value("spec", json::object());
  const std::string holder = spec.value("holderIdentity", "");
  const std::string acquired = spec.value("acquireTime", "");
  if (holder.empty() || (holder == holder_ && acquired == acquire_time_)) {
    holder_ = holder;
    return;
  }
  // A new term: someone acquired the lease.
  if (!holder_.empty() || !acquire_time_.empty()) ++leader_changes_;
  holder_ = holder;
  acquire_time_ = acquired;
  std::string who = "a replica not identified yet";
  for (size_t i = 0; i < replicas_.size(); ++i) {
    if (replicas_[i].identity == holder) who = "replica " + std::to_string(i);
  }
  chaos(now, "leader: " + who + " acquired the lease (" + holder + ")");
  if (handover_from_ && !(outage_until_ && *handover_from_ < *outage_until_)) {
    (handover_after_kill_ ? handover_ms_ : lost_lease_handover_ms_)
        .values.push_back(static_cast<double>(msBetween(*handover_from_, now)));
  }
  handover_from_.reset();
  if (outage_recovering_ && outage_until_ && now >= *outage_until_) {
    outage_recovery_ms_.values.push_back(static_cast<double>(msBetween(*outage_until_, now)));
    outage_recovering_ = false;
  }
  if (!outage_until_ || now >= *outage_until_) {
    suspended_ = false;
    disruptionEnded(now);
  }
}

std::optional<Time> Soak::staleSince(size_t index, Time t) const {
  std::optional<Time> since;
  for (const auto& [resource, breaks] : replicas_[index].breaks) {
    for (const WatchBreak& b : breaks) {
      if (b.since <= t && (!b.resumed || *b.resumed > t)) {
        since = since ? std::min(*since, b.since) : b.since;
      }
    }
  }
  return since;
}

void Soak::checkBinding(const PendingCheck& check, std::optional<size_t> replica) {
  // berth decides on its cache: the Store's state a watch latency ago, plus its own bindings
  // since. So a binding is wrong only if the node was unfit at every instant of the grace window
  // before it landed, counting the sender's own later bindings to that node. While a fault had
  // broken the sender's watch, its cache knew the Store only as of the break: the window then
  // reaches back to it, and the binding is counted as made on a stale cache.
  const Time t = check.landed;
  auto it = nodes_.find(check.node);
  if (it == nodes_.end()) {
    violations_.add("bad-binding",
                    "pod " + check.name + " bound to node " + check.node + ", which never existed");
    return;
  }
  NodeTrack& track = it->second;
  // Time::max(): the sender's watches were whole when it bound.
  const Time stale = replica ? staleSince(*replica, t).value_or(Time::max()) : Time::max();
  // The Store's state just before the binding landed, and at every change in the window before.
  const Time last = t - std::chrono::nanoseconds(1);
  auto judge = [&](Time from) -> std::optional<std::string> {
    from = std::min(from, last);
    std::vector<Time> instants = {from};
    track.view.changesIn(from, last, instants);
    track.used.changesIn(from, last, instants);
    std::string reason = "node did not exist";
    for (Time at : instants) {
      const NodeView* view = track.view.at(at);
      if (!view) continue;
      Amounts used = track.used.at(at) ? *track.used.at(at) : Amounts{};
      for (const Landed& l : track.landed) {
        if (replica && l.replica == *replica && l.at > at && l.at < t) used += l.request;
      }
      auto why = misfit(check.pod, *view, used);
      if (!why) return std::nullopt;
      reason = *why;
    }
    return reason;
  };
  std::optional<std::string> fresh = judge(t - options_.grace);
  if (fresh && stale < t) {
    std::optional<std::string> onStale = judge(stale - options_.grace);
    if (!onStale) {
      ++stale_bindings_;
      max_stale_seconds_ = std::max(max_stale_seconds_, secondsBetween(stale, t));
      if (stale_examples_.size() < kExamplesKept) {
        std::ostringstream text;
        text << std::fixed << std::setprecision(1) << "pod " << check.name << " bound to "
             << check.node << " at " << since(t) << "s by replica " << *replica
             << ", whose watch had been broken for " << secondsBetween(stale, t) << "s (" << *fresh
             << " by then)";
        stale_examples_.push_back(text.str());
      }
    }
    fresh = onStale;
  }
  if (replica) track.landed.push_back({t, check.pod.request, *replica});
  if (!fresh) return;
  std::ostringstream text;
  text << "pod " << check.name << " (" << kindName(check.pod.kind) << ", "
       << check.pod.request.milliCpu << "m) bound to " << check.node << " at " << std::fixed
       << std::setprecision(1) << since(t) << "s by replica "
       << (replica ? std::to_string(*replica) : std::string("?")) << ": " << *fresh
       << " throughout the " << options_.grace.count() << " ms before";
  violations_.add("bad-binding", text.str());
}

void Soak::checkDeadlines(Time now) {
  for (auto& [name, pod] : pods_) {
    if (pod.boundAt || pod.flagged) continue;
    std::optional<std::string> fitsOn;
    for (const auto& [nodeName, track] : nodes_) {
      const NodeView* view = track.view.latest();
      if (view && !misfit(pod, *view, track.usedNow)) {
        fitsOn = nodeName;
        break;
      }
    }
    if (!fitsOn) {
      pod.fitsSince.reset();
    } else if (!pod.fitsSince) {
      pod.fitsSince = now;
    }
    if (suspended_) continue;
    const Time start = std::max(pod.created, last_disruption_end_);
    std::ostringstream text;
    text << std::fixed << std::setprecision(1);
    if (fitsOn && now - std::max(start, *pod.fitsSince) > options_.bindWithin) {
      text << "pod " << name << " (" << kindName(pod.kind) << ") pending "
           << secondsBetween(pod.created, now) << "s, fitting node " << *fitsOn << " for "
           << secondsBetween(*pod.fitsSince, now) << "s, at " << since(now)
           << "s (reported unschedulable: " << (pod.reportedAt ? "yes" : "no") << ")";
      violations_.add("not-bound-in-time", text.str());
    } else if (!fitsOn && !pod.reportedAt && now - start > options_.bindWithin) {
      text << "pod " << name << " (" << kindName(pod.kind)
           << ") fits nowhere and is not reported after " << secondsBetween(pod.created, now)
           << "s, at " << since(now) << "s";
      violations_.add("not-reported-in-time", text.str());
    } else {
      continue;
    }
    pod.flagged = true;
    pod.deleteAt = now + 1s;  // keep the backlog from growing; the violation is recorded
  }
}

void Soak::watchesBroken(const std::vector<size_t>& indexes, Time now) {
  countBindings(now);  // rewatches logged before the fault must not end the new breaks
  for (size_t index : indexes) {
    for (const char* resource : {"nodes", "pods"}) {
      std::vector<WatchBreak>& breaks = replicas_[index].breaks[resource];
      if (breaks.empty() || breaks.back().resumed) breaks.push_back({now, std::nullopt});
    }
  }
}

void Soak::countBindings(Time now) {
  for (size_t i = 0; i < replicas_.size(); ++i) {
    Replica& r = replicas_[i];
    const std::vector<apiserver::RequestRecord> log = r.server->requestLog();
    for (size_t k = r.requestsSeen; k < log.size(); ++k) {
      const apiserver::RequestRecord& record = log[k];
      if (record.verb == "watch" && record.code == 200 && r.breaks.contains(record.resource)) {
        WatchBreak& last = r.breaks[record.resource].back();
        if (!last.resumed) last.resumed = now;
        continue;
      }
      const bool binding = record.method == "POST" &&
                           (record.subresource == "binding" || record.resource == "bindings");
      if (!binding) continue;
      if (record.code == 201) {
        bound_through_[record.name] = i;
        if (++bindings201_[record.name] == 2) {
          violations_.add("bound-twice", "pod " + record.name +
                                             " got a second 201 Binding (through replica " +
                                             std::to_string(i) + ")");
        }
      } else if (record.code == 409) {
        ++conflicts409_;
      } else {
        ++binding_errors_;
      }
    }
    r.requestsSeen = log.size();
  }
  // Judge bindings in the order they landed; one whose record is late waits a little for it.
  while (!pending_checks_.empty()) {
    const PendingCheck& check = pending_checks_.front();
    auto through = bound_through_.find(check.name);
    if (through != bound_through_.end()) {
      checkBinding(check, through->second);
    } else if (now - check.landed > 5s) {
      ++unattributed_bindings_;
      checkBinding(check, std::nullopt);
    } else {
      break;
    }
    pending_checks_.pop_front();
  }
}

void Soak::superviseReplicas(Time now) {
  for (size_t i = 0; i < replicas_.size(); ++i) {
    Replica& r = replicas_[i];
    if (r.process && !r.process->running()) {
      const int code = r.process->exitCode().value_or(-1);
      const bool lostLease =
          code == 1 && r.process->waitForLogLine({"leaderelection lost"}, 0ms).has_value();
      const bool expected = lostLease && now <= r.faultUntil + kLeaseLossAfterFault;
      std::string cause = lostLease ? "lost its lease" : "exited";
      exits_.push_back({{"replica", i},
                        {"incarnation", r.incarnation},
                        {"at_s", since(now)},
                        {"code", code},
                        {"cause", expected ? "lost lease during a fault" : cause},
                        {"log", r.process->logPath()}});
      chaos(now,
            "replica " + std::to_string(i) + " " + cause + " with code " + std::to_string(code));
      if (!expected) {
        violations_.add(
            "crash",
            "replica " + std::to_string(i) + " incarnation " + std::to_string(r.incarnation) + " " +
                cause + " with code " + std::to_string(code) +
                (code > 128 ? " (signal " + std::to_string(code - 128) + ")" : "") + " at " +
                std::to_string(static_cast<int>(since(now))) + "s; log " + r.process->logPath());
      }
      if (!r.identity.empty() && r.identity == holder_) {
        suspend(now);
        handover_from_ = now;
        handover_after_kill_ = false;
      }
      r.process.reset();
      r.restartAt = now + jitter(1s, 3s);
    }
    if (!r.process && r.restartAt && now >= *r.restartAt &&
        !(outage_until_ && now < *outage_until_)) {
      if (auto spawned = spawnReplica(i, now); !spawned.ok()) {
        violations_.add("soak-error",
                        "replica " + std::to_string(i) + ": " + spawned.error().message);
        r.restartAt = now + 5s;
      }
    }
    if (r.process && r.identity.empty() && now >= r.nextIdentityPoll) {
      r.nextIdentityPoll = now + 200ms;
      if (auto line = r.process->waitForLogLine({"Attempting to acquire leader lease"}, 0ms)) {
        r.identity = test::logField(*line, "identity").value_or("");
      }
    }
    const bool leading = !r.identity.empty() && r.identity == holder_;
    const bool sameSegment = !r.rss.empty() && r.rss.back().incarnation == r.incarnation &&
                             r.rss.back().leading == leading;
    if (r.process && (!sameSegment || now - r.rss.back().at >= kRssInterval)) {
      if (long kib = rssKiB(r.process->pid()); kib > 0) {
        r.rss.push_back({now, static_cast<double>(kib) / 1024.0, r.incarnation, leading,
                         sameSegment ? r.rss.back().segmentStart : now});
      }
    }
  }
}

void Soak::createPod(Time now) {
  const int roll = uniform(0, 99);
  PodKind kind = roll < 60   ? PodKind::Plain
                 : roll < 75 ? PodKind::Selector
                 : roll < 90 ? PodKind::Tolerating
                 : roll < 97 ? PodKind::Medium
                             : PodKind::TooBig;
  const std::string name =
      std::string("soak-") + kindName(kind) + "-" + std::to_string(next_pod_index_++);
  PodView view;
  view.kind = kind;
  view.created = now;
  // Some pods are deleted while pending; pods that fit nowhere go once they must be reported.
  if (uniform(0, 99) < 5) view.deleteAt = now + jitter(200ms, 3s);
  if (kind == PodKind::TooBig) view.deleteAt = now + options_.bindWithin + 10s;
  pods_[name] = view;
  auto created = store_.create(Resource::Pods, kNamespace, makePod(name, kind, rng_));
  if (!created.ok()) {
    pods_.erase(name);
    violations_.add("soak-error", "create pod " + name + ": " + created.error().status.message);
    return;
  }
  ++pod_stats_["created"];
  ++pod_stats_[std::string("created_") + kindName(kind)];
}

void Soak::deleteDuePods(Time now) {
  std::vector<std::string> due;
  for (const auto& [name, pod] : pods_) {
    if (pod.deleteAt && now >= *pod.deleteAt) due.push_back(name);
  }
  for (const std::string& name : due) {
    pods_[name].deleteAt.reset();
    (void)store_.remove(Resource::Pods, kNamespace, name);  // the watch event does the accounting
  }
}

void Soak::setNodeSpec(const std::string& name, NodeChange change) {
  auto node = store_.get(Resource::Nodes, "", name);
  if (!node.ok()) return;
  json& spec = (*node)["spec"];
  if (change == NodeChange::Cordon) spec["unschedulable"] = true;
  if (change == NodeChange::Uncordon) spec.erase("unschedulable");
  json taints = json::array();
  for (const json& t : spec.value("taints", json::array())) {
    if (t.value("key", "") != kChaosKey) taints.push_back(t);
  }
  const bool hadChaos = taints.size() != spec.value("taints", json::array()).size();
  if (change == NodeChange::Taint || (hadChaos && change != NodeChange::Untaint)) {
    taints.push_back({{"key", kChaosKey}, {"effect", "NoSchedule"}});
  }
  spec["taints"] = taints;
  (void)store_.update(Resource::Nodes, "", name, *node);
}

void Soak::changeNode(Time now, const std::string& name, NodeChange change) {
  setNodeSpec(name, change);
  const std::string done = nodeChangeName(change);
  ++node_stats_[done];
  std::string line = "node " + name + " " + done;
  if (change == NodeChange::Taint) line += std::string(" ") + kChaosKey + ":NoSchedule";
  chaos(now, line);
}

void Soak::churnNodes(Time now) {
  std::vector<std::string> live, cordoned, tainted;
  for (const auto& [name, track] : nodes_) {
    const NodeView* view = track.view.latest();
    if (!view || !view->exists) continue;
    live.push_back(name);
    if (view->unschedulable) cordoned.push_back(name);
    for (const Taint& t : view->taints) {
      if (t.key == kChaosKey) tainted.push_back(name);
    }
  }
  auto pick = [this](const std::vector<std::string>& from) {
    return from[uniform<size_t>(0, from.size() - 1)];
  };
  const int64_t target = options_.nodes;
  switch (uniform(0, 5)) {
    case 0:
      if (static_cast<int64_t>(cordoned.size()) < target / 5 && !live.empty()) {
        changeNode(now, pick(live), NodeChange::Cordon);
      }
      break;
    case 1:
      if (!cordoned.empty()) changeNode(now, pick(cordoned), NodeChange::Uncordon);
      break;
    case 2:
      if (static_cast<int64_t>(tainted.size()) < target / 5 && !live.empty()) {
        changeNode(now, pick(live), NodeChange::Taint);
      }
      break;
    case 3:
      if (!tainted.empty()) changeNode(now, pick(tainted), NodeChange::Untaint);
      break;
    case 4:
      if (static_cast<int64_t>(live.size()) > target * 4 / 5) {
        const std::string name = pick(live);
        (void)store_.remove(Resource::Nodes, "", name);
        // Its pods go too, as the pod garbage collector deletes pods of a deleted node.
        for (auto& [podName, pod] : pods_) {
          if (pod.boundAt && pod.node == name) pod.deleteAt = now;
        }
        ++node_stats_["deleted"];
        chaos(now, "node " + name + " deleted");
      }
      break;
    default:
      if (static_cast<int64_t>(live.size()) < target) {
        const std::string name = "node-" + std::to_string(next_node_index_);
        (void)store_.create(Resource::Nodes, "", makeNode(name, next_node_index_++));
        ++node_stats_["added"];
        chaos(now, "node " + name + " added");
      }
      break;
  }
}

void Soak::injectFault(Time now) {
  // Half the faults hit the leader's server, where they matter most.
  const int leader = leaderIndex();
  size_t index = uniform<size_t>(0, replicas_.size() - 1);
  if (leader >= 0 && uniform(0, 1) == 0) index = static_cast<size_t>(leader);
  Replica& r = replicas_[index];
  const std::string where =
      "server " + std::to_string(index) + (static_cast<int>(index) == leader ? " (leader)" : "");
  Time faultEnd = now + 1s;
  std::vector<size_t> all;
  for (size_t i = 0; i < replicas_.size(); ++i) all.push_back(i);
  switch (uniform(0, 6)) {
    case 0:
      // The Store ends every watch, on all three servers: everyone rewatches.
      r.server->closeWatches();
      watchesBroken(all, now);
      ++fault_stats_["watches_dropped"];
      chaos(now, "fault: every watch dropped");
      break;
    case 1:
      r.server->expireNextWatches(3);
      r.server->closeWatches();
      watchesBroken(all, now);
      ++fault_stats_["watches_expired_410"];
      chaos(now, "fault: watches dropped, the next 3 on " + where + " answer 410 Expired");
      break;
    case 2: {
      const int count = uniform(3, 12);
      const int code = uniform(0, 1) == 0 ? 500 : 503;
      r.server->failNextRequests(count, code);
      ++fault_stats_["5xx_bursts"];
      chaos(now, "fault: the next " + std::to_string(count) + " requests to " + where + " answer " +
                     std::to_string(code));
      break;
    }
    case 3: {
      const milliseconds length = jitter(500ms, 2500ms);
      r.server->failRequestsFor(length, 503);
      faultEnd = now + length;
      ++fault_stats_["5xx_periods"];
      chaos(now, "fault: every request to " + where + " answers 503 for " +
                     std::to_string(length.count()) + " ms");
      // The leader may lose its lease over it: pods are judged from the end of this fault.
      disruptionEnded(faultEnd);
      break;
    }
    case 4:
      r.server->injectMalformedWatchLine();
      watchesBroken({index}, now);
      ++fault_stats_["malformed_watch_lines"];
      chaos(now, "fault: a malformed line on every watch of " + where);
      break;
    case 5:
      for (Replica& each : replicas_) each.server->delayBindings(jitter(100ms, 400ms));
      delayed_bindings_until_ = now + 5s;
      faultEnd = delayed_bindings_until_;
      ++fault_stats_["slow_bindings"];
      chaos(now, "fault: bindings delayed by 100-400 ms for 5 s");
      break;
    default:
      r.server->closeWatches();
      r.server->failNextRequests(uniform(2, 6), 500);
      watchesBroken(all, now);
      ++fault_stats_["watch_drop_with_5xx"];
      chaos(now, "fault: every watch dropped and the next requests to " + where + " answer 500");
      break;
  }
  r.faultUntil = std::max(r.faultUntil, faultEnd);
}

void Soak::killLeader(Time now) {
  const int leader = leaderIndex();
  if (leader < 0) return;
  Replica& r = replicas_[static_cast<size_t>(leader)];
  r.process->kill();
  ++fault_stats_["leader_kills"];
  chaos(now, "kill -9 the leader, replica " + std::to_string(leader) + " (pid " +
                 std::to_string(r.process->pid()) + ")");
  exits_.push_back({{"replica", leader},
                    {"incarnation", r.incarnation},
                    {"at_s", since(now)},
                    {"code", r.process->exitCode().value_or(-1)},
                    {"cause", "killed by the soak"},
                    {"log", r.process->logPath()}});
  r.process.reset();
  r.restartAt = now + jitter(1s, 3s);
  suspend(now);
  handover_from_ = now;
  handover_after_kill_ = true;
}

void Soak::startOutage(Time now) {
  std::vector<size_t> all;
  for (size_t i = 0; i < replicas_.size(); ++i) all.push_back(i);
  watchesBroken(all, now);
  for (Replica& r : replicas_) {
    r.server->refuseConnectionsFor(options_.outageLength);
    r.faultUntil = now + options_.outageLength;
  }
  outage_until_ = now + options_.outageLength;
  outage_recovering_ = true;
  suspend(now);
  ++fault_stats_["outages"];
  chaos(now, "outage: all three servers refuse connections for " +
                 std::to_string(options_.outageLength.count()) + " ms");
}

void Soak::step(Time now, bool chaosOn) {
  drainWatches(now);
  superviseReplicas(now);
  if (outage_until_ && now >= *outage_until_ && !outage_recovering_) outage_until_.reset();
  if (delayed_bindings_until_ != Time{} && now >= delayed_bindings_until_) {
    for (Replica& r : replicas_) r.server->delayBindings(0ms);
    delayed_bindings_until_ = Time{};
  }
  if (chaosOn) {
    while (now >= next_create_) {
      createPod(now);
      next_create_ += milliseconds(static_cast<int64_t>(
          std::exponential_distribution<double>(options_.podsPerSecond)(rng_) * 1000.0));
    }
    const bool outage = outage_until_ && now < *outage_until_ + 5s;
    if (now >= next_node_event_) {
      churnNodes(now);
      next_node_event_ = now + jitter(1500ms, 4000ms);
    }
    if (now >= next_fault_) {
      if (!outage) injectFault(now);
      next_fault_ = now + jitter(3s, 8s);
    }
    if (now >= next_kill_) {
      // Not within 15 s of the outage, so that each hand-over is measured on its own.
      if (!outage && !(next_outage_ - now < 15s) && !suspended_) {
        killLeader(now);
        next_kill_ = now + jitter(options_.killEvery * 8 / 10, options_.killEvery * 12 / 10);
      } else {
        next_kill_ = now + 5s;
      }
    }
    if (now >= next_outage_) {
      startOutage(now);
      next_outage_ = options_.outageEvery.count() > 0 ? now + options_.outageEvery : Time::max();
    }
  }
  deleteDuePods(now);
  // Suspending the judgement must not hide a cluster that never gets a leader again.
  const milliseconds leaderless = options_.outageLength + options_.bindWithin;
  if (suspended_ && now - suspended_since_ > leaderless && !leaderless_reported_) {
    leaderless_reported_ = true;
    violations_.add("no-leader", "no replica acquired the lease for " +
                                     std::to_string(leaderless.count() / 1000) + " s from " +
                                     std::to_string(static_cast<int>(since(suspended_since_))) +
                                     "s");
  }
  if (!suspended_) leaderless_reported_ = false;
  if (now >= next_check_) {
    checkDeadlines(now);
    next_check_ = now + 250ms;
  }
  if (now >= next_count_) {
    countBindings(now);
    next_count_ = now + 250ms;
  }
  if (now >= next_prune_) {
    // A stale cache may be judged as far back as its break; older history is not needed.
    const Time keepFrom = now - kHistoryKept;
    for (auto& [name, track] : nodes_) {
      track.view.prune(keepFrom);
      track.used.prune(keepFrom);
      while (!track.landed.empty() && track.landed.front().at < keepFrom) track.landed.pop_front();
    }
    for (Replica& r : replicas_) {
      for (auto& [resource, breaks] : r.breaks) {
        std::erase_if(breaks,
                      [&](const WatchBreak& b) { return b.resumed && *b.resumed < keepFrom; });
      }
    }
    next_prune_ = now + 1s;
  }
}

util::Result<json> Soak::run() {
  if (auto ready = setUp(); !ready.ok()) return ready.error();
  start_ = Clock::now();
  suspended_since_ = start_;
  for (size_t i = 0; i < replicas_.size(); ++i) {
    if (auto spawned = spawnReplica(i, start_); !spawned.ok()) return spawned.error();
  }
  const Time end = start_ + options_.duration;
  next_create_ = next_node_event_ = next_fault_ = start_ + 5s;
  next_kill_ = start_ + jitter(options_.killEvery * 8 / 10, options_.killEvery * 12 / 10);
  next_outage_ = options_.outageEvery.count() > 0 ? start_ + options_.outageEvery
                                                  : start_ + options_.duration / 2;
  Time now = start_;
  while ((now = Clock::now()) < end) {
    step(now, true);
    std::this_thread::sleep_for(10ms);
  }
  // Settle: no more chaos nor pods; every pending pod must still meet its deadline.
  chaos(now, "chaos over: settling");
  const Time settleBy = std::max(now, last_disruption_end_) + options_.bindWithin + 5s;
  while ((now = Clock::now()) < settleBy) {
    step(now, false);
    const bool settled = !suspended_ && std::all_of(pods_.begin(), pods_.end(), [](const auto& p) {
      return p.second.boundAt || p.second.reportedAt || p.second.flagged;
    });
    if (settled && now - end > 3s) break;
    std::this_thread::sleep_for(10ms);
  }
  checkDeadlines(now);
  std::this_thread::sleep_for(500ms);  // a request is logged just after it is answered
  countBindings(Clock::now());
  while (!pending_checks_.empty()) {
    ++unattributed_bindings_;
    checkBinding(pending_checks_.front(), std::nullopt);
    pending_checks_.pop_front();
  }
  // Every pod the Store shows bound has exactly one successful Binding behind it.
  for (const auto& [name, pod] : pods_) {
    if (pod.boundAt && bindings201_[name] == 0) ++pod_stats_["bound_without_recorded_binding"];
  }
  for (size_t i = 0; i < replicas_.size(); ++i) {
    Replica& r = replicas_[i];
    if (!r.process) continue;
    const int code = r.process->terminate(10s);
    if (code != 0) {
      violations_.add("crash", "replica " + std::to_string(i) + " exited " + std::to_string(code) +
                                   " on SIGTERM; log " + r.process->logPath());
    }
    exits_.push_back({{"replica", i},
                      {"incarnation", r.incarnation},
                      {"at_s", since(Clock::now())},
                      {"code", code},
                      {"cause", "SIGTERM at the end"},
                      {"log", r.process->logPath()}});
  }
  for (Replica& r : replicas_) r.server->stop();
  return summary(end);
}

json Soak::summary(Time end) {
  // RSS: samples after the soak's warm-up (its first 20 %) and each incarnation's own warm-up.
  const Time usableFrom = start_ + options_.duration / 5;
  std::ofstream csv(log_dir_ + "/rss.csv");
  csv << "replica,incarnation,leading,t_s,rss_mib\n";
  for (size_t i = 0; i < replicas_.size(); ++i) {
    for (const RssSample& s : replicas_[i].rss) {
      csv << i << "," << s.incarnation << "," << s.leading << "," << since(s.at) << "," << s.mib
          << "\n";
    }
  }
  json rss = json::array();
  for (size_t i = 0; i < replicas_.size(); ++i) {
    Slope slope = rssSlope(replicas_[i].rss, usableFrom, 2.0);
    json entry = {{"replica", i},
                  {"samples", slope.samples},
                  {"span_min", slope.spanMinutes},
                  {"max_mib", slope.maxMib},
                  {"incarnations", replicas_[i].incarnation}};
    entry["slope_mib_per_min"] = slope.mibPerMinute ? json(*slope.mibPerMinute) : json(nullptr);
    if (slope.mibPerMinute && *slope.mibPerMinute > kLeakMiBPerMinute) {
      std::ostringstream text;
      text << "replica " << i << " RSS grows " << std::fixed << std::setprecision(2)
           << *slope.mibPerMinute << " MiB/min over " << slope.spanMinutes << " min of samples";
      violations_.add("rss-growth", text.str());
    }
    rss.push_back(entry);
  }
  int64_t unschedulable = 0;
  for (const auto& [name, pod] : pods_) unschedulable += pod.reportedAt && !pod.boundAt ? 1 : 0;
  const bool pass = violations_.total() == 0;
  return {{"seed", options_.seed},
          {"duration_s", secondsBetween(start_, end)},
          {"nodes", options_.nodes},
          {"bind_within_s", options_.bindWithin.count() / 1000.0},
          {"grace_s", options_.grace.count() / 1000.0},
          {"pods", pod_stats_},
          {"pods_pending_unschedulable_at_end", unschedulable},
          {"node_events", node_stats_},
          {"faults", fault_stats_},
          {"leader_changes", leader_changes_},
          {"handover_ms", handover_ms_.toJson()},
          {"handover_after_lost_lease_ms", lost_lease_handover_ms_.toJson()},
          {"outage_recovery_ms", outage_recovery_ms_.toJson()},
          {"time_to_bind_ms", time_to_bind_ms_.toJson()},
          {"slowest_bind", slowest_bind_example_},
          {"binding_409_refused", conflicts409_},
          {"binding_other_errors", binding_errors_},
          {"bindings_on_stale_cache",
           {{"count", stale_bindings_},
            {"max_staleness_s", max_stale_seconds_},
            {"examples", stale_examples_}}},
          {"bindings_unattributed", unattributed_bindings_},
          {"violations", violations_.toJson()},
          {"rss", rss},
          {"replica_exits", exits_},
          {"log_dir", log_dir_},
          {"pass", pass}};
}

void printSummary(const json& s, std::ostream& out) {
  auto fixed = [](double v) {
    std::ostringstream o;
    o << std::fixed << std::setprecision(1) << v;
    return o.str();
  };
  auto slope = [](double v) {
    std::ostringstream o;
    o << std::fixed << std::setprecision(3) << v;
    return o.str();
  };
  auto dist = [&](const json& d) -> std::string {
    if (d.value("count", 0) == 0) return "none";
    return fixed(d["min"].get<double>()) + " / " + fixed(d["median"].get<double>()) + " / " +
           fixed(d["max"].get<double>()) + " ms (min/median/max of " +
           std::to_string(d["count"].get<int>()) + ")";
  };
  auto counts = [](const json& m) {
    std::string text;
    for (const auto& [k, v] : m.items()) text += (text.empty() ? "" : ", ") + k + " " + v.dump();
    return text.empty() ? std::string("none") : text;
  };
  out << "berth-soak: seed " << s["seed"] << ", " << fixed(s["duration_s"].get<double>()) << " s, "
      << s["nodes"] << " nodes\n"
      << "  pods:          " << counts(s["pods"]) << "\n"
      << "  node events:   " << counts(s["node_events"]) << "\n"
      << "  faults:        " << counts(s["faults"]) << "\n"
      << "  leader changes " << s["leader_changes"] << "; hand-over after kill "
      << dist(s["handover_ms"]) << "\n                 after a lost lease "
      << dist(s["handover_after_lost_lease_ms"]) << "; after the outage "
      << dist(s["outage_recovery_ms"]) << "\n"
      << "  time to bind:  " << dist(s["time_to_bind_ms"]) << ", p99 "
      << (s["time_to_bind_ms"].contains("p99") ? fixed(s["time_to_bind_ms"]["p99"].get<double>())
                                               : "-")
      << " ms\n    slowest: " << s["slowest_bind"].get<std::string>() << "\n"
      << "  bindings refused 409: " << s["binding_409_refused"] << ", other binding errors "
      << s["binding_other_errors"] << "; bindings judged on a stale cache "
      << s["bindings_on_stale_cache"]["count"] << " (max staleness "
      << fixed(s["bindings_on_stale_cache"]["max_staleness_s"].get<double>()) << " s)\n";
  for (const json& e : s["bindings_on_stale_cache"]["examples"])
    out << "    " << e.get<std::string>() << "\n";
  for (const json& r : s["rss"]) {
    out << "  rss replica " << r["replica"] << ": slope "
        << (r["slope_mib_per_min"].is_null()
                ? std::string("n/a (too few samples)")
                : slope(r["slope_mib_per_min"].get<double>()) + " MiB/min")
        << " over " << fixed(r["span_min"].get<double>()) << " min, max "
        << fixed(r["max_mib"].get<double>()) << " MiB, " << r["incarnations"] << " incarnations\n";
  }
  if (s["violations"].empty()) {
    out << "  violations:    none\n";
  } else {
    for (const auto& [kind, v] : s["violations"].items()) {
      out << "  VIOLATION " << kind << " x" << v["count"] << "\n";
      for (const json& e : v["examples"]) out << "    " << e.get<std::string>() << "\n";
    }
  }
  out << "  logs: " << s["log_dir"].get<std::string>() << "\n"
      << (s["pass"].get<bool>() ? "PASS" : "FAIL") << "\n";
}

int run(const std::vector<std::string>& args) {
  Options o;
  o.seed = std::random_device{}();
  int64_t nodes = o.nodes;
  cmd::FlagSet flags;
  flags.addDuration("duration", &o.duration, "How long the chaos runs (then pending pods settle)");
  flags.addInt("nodes", &nodes,
               "Nodes in the cluster (churn keeps it between 80% and 100% of this)");
  flags.addUint("seed", &o.seed, "Seed of the chaos schedule (random unless set; always printed)");
  flags.addBool("json", &o.asJson, "Print one JSON object instead of the summary");
  flags.addString("report", &o.reportPath, "Also write the JSON object to this file");
  flags.addDuration("bind-within", &o.bindWithin,
                    "A pending pod must be bound or reported unschedulable within this");
  flags.addDuration("grace", &o.grace,
                    "How far back a binding is judged against the Store's state");
  flags.addDuration("outage-every", &o.outageEvery, "Outage interval (default: one, half-way)");
  flags.addDuration("outage-length", &o.outageLength, "How long all servers refuse connections");
  flags.addDuration("leader-kill-every", &o.killEvery, "Mean interval between leader kills (±20%)");
  flags.addFloat("pods-per-second", &o.podsPerSecond, "Pod creation rate");
  flags.addString("berth", &o.berthBinary, "The berth binary to run");
  flags.addBool("keep-logs", &o.keepLogs, "Keep the log directory when the soak passes");
  const cmd::CommandLine cli =
      flags.parseCommandLine(args, "Usage: berth-soak [flags]\n\nFlags:\n");
  if (cli.exitCode) return *cli.exitCode;
  o.nodes = nodes;
  if (o.nodes < 5 || o.podsPerSecond <= 0 || o.duration < 30s) {
    std::cerr << "Error: --nodes must be at least 5, --pods-per-second positive and --duration at "
                 "least 30s\n";
    return 2;
  }
  char dirTemplate[] = "/tmp/berth-soak-XXXXXX";
  if (!mkdtemp(dirTemplate)) {
    std::cerr << "Error: cannot create a log directory under /tmp\n";
    return 1;
  }
  const std::string logDir = dirTemplate;
  signal(SIGPIPE, SIG_IGN);
  if (!o.asJson) {
    std::cerr << "berth-soak: seed " << o.seed << ", " << cmd::formatDuration(o.duration) << ", "
              << o.nodes << " nodes, logs in " << logDir << "\n";
  }
  const Options options = o;
  Soak soak(o, logDir);
  auto result = soak.run();
  if (!result.ok()) {
    std::cerr << "Error: " << result.error().message << " (logs in " << logDir << ")\n";
    return 1;
  }
  const json& s = *result;
  if (options.asJson) {
    std::cout << s.dump() << "\n";
  } else {
    printSummary(s, std::cout);
  }
  if (!options.reportPath.empty()) std::ofstream(options.reportPath) << s.dump(2) << "\n";
  const bool pass = s["pass"].get<bool>();
  if (pass && !options.keepLogs) std::filesystem::remove_all(logDir);
  return pass ? 0 : 1;
}

}  // namespace
}  // namespace berth::soak

int main(int argc, char** argv) {
  return berth::soak::run(std::vector<std::string>(argv + 1, argv + argc));
}
