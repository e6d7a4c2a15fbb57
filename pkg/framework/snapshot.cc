#include "pkg/framework/snapshot.h"

#include <cstddef>

namespace berth::framework {

Snapshot Snapshot::build(const std::vector<api::NodePtr>& nodes,
                         const std::vector<PodInfoPtr>& boundPods,
                         std::vector<PodInfoPtr>* orphans) {
  Snapshot s;
  for (const auto& n : nodes) s.addNodeInfo(std::make_shared<NodeInfo>(n));
  for (const auto& p : boundPods) {
    if (!s.addPod(p->pod->spec.nodeName, p) && orphans) orphans->push_back(p);
  }
  return s;
}

void Snapshot::addNodeInfo(NodeInfoPtr info) {
  auto [it, inserted] = index_.try_emplace(info->name(), node_infos_.size());
  info->setSnapshotPosition(it->second);
  if (inserted) {
    inter_pod_.addNode(*info);
    countClaims(*info, 1);
    track(nullptr, info.get());
    generations_.push_back(info->generation());
    node_infos_.push_back(std::move(info));
  } else {
    inter_pod_.replaceNode(it->second, *node_infos_[it->second], *info);
    countClaims(*node_infos_[it->second], -1);
    countClaims(*info, 1);
    track(node_infos_[it->second].get(), info.get());
    generations_[it->second] = info->generation();
    node_infos_[it->second] = std::move(info);
  }
}

bool Snapshot::removeNodeInfo(std::string_view name) {
  auto it = index_.find(std::string(name));
  if (it == index_.end()) return false;
  const size_t at = it->second;
  index_.erase(it);
  inter_pod_.removeNode(at, *node_infos_[at]);
  countClaims(*node_infos_[at], -1);
  track(node_infos_[at].get(), nullptr);
  node_infos_.erase(node_infos_.begin() + static_cast<std::ptrdiff_t>(at));
  generations_.erase(generations_.begin() + static_cast<std::ptrdiff_t>(at));
  for (size_t i = at; i < node_infos_.size(); i++) {
    index_[node_infos_[i]->name()] = i;
    node_infos_[i]->setSnapshotPosition(i);
  }
  return true;
}

bool Snapshot::addPod(std::string_view node, PodInfoPtr pod) {
  auto it = index_.find(std::string(node));
  if (it == index_.end()) return false;
  NodeInfo& info = *node_infos_[it->second];
  inter_pod_.addPod(it->second, info, *pod);
  for (std::string& key : podClaimKeys(*pod->pod)) ++pvc_ref_counts_[std::move(key)];
  info.addPod(std::move(pod));
  track(&info, &info);
  generations_[it->second] = info.generation();
  return true;
}

bool Snapshot::removePod(std::string_view node, const api::Pod& pod) {
  auto it = index_.find(std::string(node));
  if (it == index_.end()) return false;
  NodeInfo& info = *node_infos_[it->second];
  PodInfoPtr held = info.findPod(pod);
  if (held) inter_pod_.removePod(it->second, info, *held);
  const bool removed = info.removePod(pod);
  if (held) {
    for (const std::string& key : podClaimKeys(*held->pod)) {
      auto count = pvc_ref_counts_.find(key);
      if (count != pvc_ref_counts_.end() && --count->second <= 0) pvc_ref_counts_.erase(count);
    }
  }
  track(&info, &info);
  generations_[it->second] = info.generation();
  return removed;
}

void Snapshot::NodeSet::set(const NodeInfo* info, bool member) {
  auto it = at_.find(info);
  if (member == (it != at_.end())) return;
  if (member) {
    at_.emplace(info, items_.size());
    items_.push_back(info);
    return;
  }
  const size_t i = it->second;
  at_.erase(it);
  if (i + 1 != items_.size()) {
    items_[i] = items_.back();
    at_[items_[i]] = i;
  }
  items_.pop_back();
}

void Snapshot::track(const NodeInfo* old, const NodeInfo* now) {
  if (old != nullptr && old != now) {
    with_affinity_.set(old, false);
    with_required_anti_affinity_.set(old, false);
    with_images_.set(old, false);
  }
  if (now != nullptr) {
    with_affinity_.set(now, !now->podsWithAffinity().empty());
    with_required_anti_affinity_.set(now, !now->podsWithRequiredAntiAffinity().empty());
    with_images_.set(now, now->node() != nullptr && !now->node()->status.images.empty());
  }
}

void Snapshot::countClaims(const NodeInfo& info, int sign) {
  for (const auto& [key, n] : info.pvcRefCounts()) {
    auto count = pvc_ref_counts_.try_emplace(key, 0).first;
    count->second += sign * n;
    if (count->second <= 0) pvc_ref_counts_.erase(count);
  }
}

bool Snapshot::isPVCUsedByPods(std::string_view key) const {
  return pvc_ref_counts_.find(std::string(key)) != pvc_ref_counts_.end();
}

const NodeInfo* Snapshot::get(std::string_view name) const {
  auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : node_infos_[it->second].get();
}

}  // namespace berth::framework
