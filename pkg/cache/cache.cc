#include "pkg/cache/cache.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace berth::cache {
namespace {

// Upstream keys pods by uid; objects without one (tests, files) fall back to namespace/name.
std::string keyOf(const api::Pod& pod) {
  return pod.metadata.uid.empty() ? api::podKey(pod) : pod.metadata.uid;
}

// "<uid>(<namespace>/<name>)", as upstream's "pod %v(%v)" messages print key and object.
std::string describe(const api::Pod& pod) { return keyOf(pod) + "(" + api::podKey(pod) + ")"; }

}  // namespace

bool isKubeletAdmissionRejection(std::string_view reason) {
  // k/k pkg/kubelet/lifecycle/predicate.go and the device/topology admit handlers.
  static constexpr std::string_view kReasons[] = {
      "UnexpectedAdmissionError",
      "UnexpectedPredicateFailureType",
      "UnknownReason",
      "InvalidNodeInfo",
      "NodeAffinity",
      "NodeName",
      "NodePorts",
      "TaintToleration",
      "PodOSSelectorNodeLabelDoesNotMatch",
      "PodOSNotSupported",
      "InitContainerRestartPolicyForbidden",
      "SupplementalGroupsPolicyNotSupported",
      "TopologyAffinityError",
  };
  if (reason.size() > 5 && reason.starts_with("OutOf")) return true;
  return std::find(std::begin(kReasons), std::end(kReasons), reason) != std::end(kReasons);
}

Cache::Cache(util::Clock& clock, CacheOptions options) : clock_(clock), options_(options) {}

// --- Nodes ---------------------------------------------------------------------------------------

void Cache::addNode(api::NodePtr node) {
  if (!node) return;
  std::lock_guard lock(mu_);
  NodeItem& item = itemLocked(node->metadata.name);
  if (!item.info.node()) {
    real_nodes_++;
    item.order = next_order_++;
  }
  item.info.setNode(std::move(node));
  touchLocked(item);
}

util::Result<void> Cache::removeNode(const api::Node& node) {
  const std::string& name = node.metadata.name;
  std::lock_guard lock(mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end() || !it->second.info.node()) {
    return util::Error{util::ErrorCode::NotFound, "node " + name + " is not found"};
  }
  // Pod deletions come on another watch and may arrive later: keep the pods on a node-less
  // NodeInfo until then.
  it->second.info.setNode(nullptr);
  real_nodes_--;
  touchLocked(it->second);
  maybeDropItemLocked(name);
  return {};
}

// --- Assumed pods --------------------------------------------------------------------------------

util::Result<void> Cache::assumePod(framework::PodInfoPtr pod) {
  if (!pod || !pod->pod) {
    return util::invalidArgument("assumePod: no pod");
  }
  if (pod->pod->spec.nodeName.empty()) {
    return util::invalidArgument("pod " + api::podKey(*pod->pod) +
                                 ": spec.nodeName: must be set to assume the pod");
  }
  std::string key = keyOf(*pod->pod);
  std::lock_guard lock(mu_);
  if (pods_.contains(key)) {
    return util::Error{util::ErrorCode::AlreadyExists,
                       "pod " + describe(*pod->pod) + " is in the cache, so can't be assumed"};
  }
  countLocked(key, PodState{std::move(pod), /*assumed=*/true, false, std::nullopt,
                            /*placedHere=*/true});
  return {};
}

void Cache::finishBinding(const api::Pod& pod) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(keyOf(pod));
  if (it == pods_.end() || !it->second.assumed) return;
  it->second.bindingFinished = true;
  if (options_.assumedPodTtl > util::Duration::zero()) {
    it->second.deadline = clock_.monotonicNow() + options_.assumedPodTtl;
  }
}

util::Result<void> Cache::forgetPod(const api::Pod& pod) {
  std::string key = keyOf(pod);
  std::lock_guard lock(mu_);
  auto it = pods_.find(key);
  if (it == pods_.end()) return {};  // already gone (e.g. deleted meanwhile)
  const std::string& cachedNode = it->second.info->pod->spec.nodeName;
  if (cachedNode != pod.spec.nodeName) {
    return util::Error{util::ErrorCode::FailedPrecondition,
                       "pod " + describe(pod) + " was assumed on " + pod.spec.nodeName +
                           " but assigned to " + cachedNode};
  }
  if (!it->second.assumed) {
    return util::Error{
        util::ErrorCode::FailedPrecondition,
        "pod " + describe(pod) + " is not assumed, so it cannot be removed or forgotten"};
  }
  uncountLocked(key);
  return {};
}

bool Cache::isAssumed(const api::Pod& pod) const {
  std::lock_guard lock(mu_);
  auto it = pods_.find(keyOf(pod));
  return it != pods_.end() && it->second.assumed;
}

size_t Cache::cleanupAssumedPods() {
  std::lock_guard lock(mu_);
  const auto now = clock_.monotonicNow();
  std::vector<std::string> expired;
  for (const auto& [key, state] : pods_) {
    if (state.assumed && state.bindingFinished && state.deadline && now >= *state.deadline) {
      expired.push_back(key);
    }
  }
  for (const auto& key : expired) uncountLocked(key);
  return expired.size();
}

// --- Bound pods ----------------------------------------------------------------------------------

util::Result<void> Cache::addPod(api::PodPtr pod) {
  if (!pod) return util::invalidArgument("addPod: no pod");
  if (pod->spec.nodeName.empty()) {
    return util::invalidArgument("pod " + api::podKey(*pod) +
                                 ": spec.nodeName: only bound pods are cached");
  }
  std::string key = keyOf(*pod);
  std::lock_guard lock(mu_);
  if (api::isTerminal(*pod)) {
    dropTerminalLocked(*pod);
    return {};
  }
  PodState state;
  if (auto it = pods_.find(key); it != pods_.end()) {
    // Confirms an assumed pod (on the node the API server says, which wins over the assumed one),
    // or replaces the counted version of a known pod.
    state.placedHere = it->second.placedHere;
    uncountLocked(key);
  }
  state.info = framework::makePodInfo(std::move(pod));
  countLocked(key, std::move(state));
  return {};
}

util::Result<void> Cache::removePod(const api::Pod& pod) {
  std::string key = keyOf(pod);
  std::lock_guard lock(mu_);
  if (!pods_.contains(key)) {
    // A pod that ended was dropped when it did; its deletion has nothing left to free.
    if (api::isTerminal(pod)) return {};
    return util::Error{
        util::ErrorCode::NotFound,
        "pod " + describe(pod) + " is not found in scheduler cache, so cannot be removed from it"};
  }
  uncountLocked(key);
  return {};
}

void Cache::dropTerminalLocked(const api::Pod& pod) {
  std::string key = keyOf(pod);
  auto it = pods_.find(key);
  if (it == pods_.end()) return;  // never held, or already freed: nothing to subtract
  if (it->second.placedHere && pod.status.phase == api::kPodFailed &&
      isKubeletAdmissionRejection(pod.status.reason)) {
    kubelet_rejections_[pod.status.reason]++;
  }
  uncountLocked(key);
}

// --- Reading -------------------------------------------------------------------------------------

void Cache::updateSnapshot(framework::Snapshot& snapshot) const {
  std::lock_guard lock(mu_);
  const int64_t since = snapshot.generation();
  std::vector<const NodeItem*> added;
  for (const NodeItem* item : recent_) {
    if (item->info.generation() <= since) break;  // the rest changed before the last update
    const std::string& name = item->info.name();
    if (!item->info.node()) continue;  // node-less: dropped below if the snapshot still has it
    if (snapshot.get(name)) {
      // A fresh copy rather than an assignment: a reader may still hold the previous one.
      snapshot.addNodeInfo(std::make_shared<framework::NodeInfo>(item->info));
    } else {
      added.push_back(item);
    }
  }
  std::sort(added.begin(), added.end(),
            [](const NodeItem* a, const NodeItem* b) { return a->order < b->order; });
  for (const NodeItem* item : added) {
    snapshot.addNodeInfo(std::make_shared<framework::NodeInfo>(item->info));
  }
  if (snapshot.numNodes() != real_nodes_) {
    std::vector<std::string> gone;
    for (const auto& info : snapshot.nodeInfos()) {
      auto it = nodes_.find(info->name());
      if (it == nodes_.end() || !it->second.info.node()) gone.push_back(info->name());
    }
    for (const auto& name : gone) snapshot.removeNodeInfo(name);
  }
  if (!recent_.empty()) {
    snapshot.setGeneration(std::max(since, recent_.front()->info.generation()));
  }
}

CacheSize Cache::size() const {
  std::lock_guard lock(mu_);
  CacheSize size{real_nodes_, pods_.size(), assumed_};
  for (const auto& [name, item] : nodes_) {
    if (item.info.node() == nullptr) size.podsOnUnknownNodes += item.info.pods().size();
  }
  return size;
}

std::map<std::string, int64_t> Cache::kubeletRejections() const {
  std::lock_guard lock(mu_);
  return kubelet_rejections_;
}

// --- Internals (mu_ held) ------------------------------------------------------------------------

Cache::NodeItem& Cache::itemLocked(const std::string& name) {
  auto [it, inserted] = nodes_.try_emplace(name);
  if (inserted) {
    recent_.push_front(&it->second);
    it->second.recent = recent_.begin();
  }
  return it->second;
}

void Cache::touchLocked(NodeItem& item) { recent_.splice(recent_.begin(), recent_, item.recent); }

void Cache::maybeDropItemLocked(const std::string& name) {
  auto it = nodes_.find(name);
  if (it == nodes_.end() || it->second.info.node() || !it->second.info.pods().empty()) return;
  recent_.erase(it->second.recent);
  nodes_.erase(it);
}

void Cache::countLocked(const std::string& key, PodState state) {
  NodeItem& item = itemLocked(state.info->pod->spec.nodeName);
  item.info.addPod(state.info);
  touchLocked(item);
  if (state.assumed) assumed_++;
  pods_[key] = std::move(state);
}

void Cache::uncountLocked(const std::string& key) {
  auto it = pods_.find(key);
  if (it == pods_.end()) return;
  const std::string nodeName = it->second.info->pod->spec.nodeName;
  if (auto node = nodes_.find(nodeName); node != nodes_.end()) {
    node->second.info.removePod(*it->second.info->pod);
    touchLocked(node->second);
    maybeDropItemLocked(nodeName);
  }
  if (it->second.assumed) assumed_--;
  pods_.erase(it);
}

}  // namespace berth::cache
