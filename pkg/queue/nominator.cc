#include "pkg/queue/nominator.h"

#include <algorithm>
#include <mutex>
#include <utility>

namespace berth::queue {

void Nominator::updateFromStatus(api::PodPtr pod) {
  const std::string key = api::podKey(*pod);
  const std::string node = pod->status.nominatedNodeName;
  std::unique_lock lock(mu_);
  auto it = by_pod_.find(key);
  if (!node.empty()) {
    setLocked(key, framework::makePodInfo(std::move(pod)), node, true);
  } else if (it != by_pod_.end()) {
    if (it->second.fromStatus) {
      eraseLocked(key);
    } else {
      it->second.pod = framework::makePodInfo(std::move(pod));
    }
  }
}

void Nominator::nominate(framework::PodInfoPtr pod, const std::string& node) {
  const std::string key = api::podKey(*pod->pod);
  std::unique_lock lock(mu_);
  if (node.empty()) {
    eraseLocked(key);
    return;
  }
  setLocked(key, std::move(pod), node, false);
}

void Nominator::remove(const api::Pod& pod) {
  std::unique_lock lock(mu_);
  eraseLocked(api::podKey(pod));
}

std::string Nominator::nominatedNode(const api::Pod& pod) const {
  std::shared_lock lock(mu_);
  auto it = by_pod_.find(api::podKey(pod));
  return it == by_pod_.end() ? std::string() : it->second.node;
}

std::vector<framework::PodInfoPtr> Nominator::nominatedPodsForNode(std::string_view node) const {
  std::vector<framework::PodInfoPtr> out;
  std::shared_lock lock(mu_);
  auto it = by_node_.find(std::string(node));
  if (it == by_node_.end()) return out;
  out.reserve(it->second.size());
  for (const auto& key : it->second) out.push_back(by_pod_.at(key).pod);
  return out;
}

std::optional<std::vector<std::string>> Nominator::nominatedNodes() const {
  std::vector<std::string> out;
  std::shared_lock lock(mu_);
  out.reserve(by_node_.size());
  for (const auto& [node, keys] : by_node_) out.push_back(node);
  return out;
}

void Nominator::setLocked(const std::string& key, framework::PodInfoPtr pod,
                          const std::string& node, bool fromStatus) {
  auto it = by_pod_.find(key);
  if (it != by_pod_.end() && it->second.node != node) {
    eraseLocked(key);
    it = by_pod_.end();
  }
  if (it == by_pod_.end()) {
    by_pod_.emplace(key, Nomination{std::move(pod), node, fromStatus});
    by_node_[node].push_back(key);
    return;
  }
  it->second.pod = std::move(pod);
  it->second.fromStatus = it->second.fromStatus || fromStatus;
}

void Nominator::eraseLocked(const std::string& key) {
  auto it = by_pod_.find(key);
  if (it == by_pod_.end()) return;
  auto node = by_node_.find(it->second.node);
  if (node != by_node_.end()) {
    std::erase(node->second, key);
    if (node->second.empty()) by_node_.erase(node);
  }
  by_pod_.erase(it);
}

}  // namespace berth::queue
