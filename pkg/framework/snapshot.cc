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
  if (inserted) {
    generations_.push_back(info->generation());
    node_infos_.push_back(std::move(info));
  } else {
    generations_[it->second] = info->generation();
    node_infos_[it->second] = std::move(info);
  }
}

bool Snapshot::removeNodeInfo(std::string_view name) {
  auto it = index_.find(std::string(name));
  if (it == index_.end()) return false;
  const size_t at = it->second;
  index_.erase(it);
  node_infos_.erase(node_infos_.begin() + static_cast<std::ptrdiff_t>(at));
  generations_.erase(generations_.begin() + static_cast<std::ptrdiff_t>(at));
  for (size_t i = at; i < node_infos_.size(); i++) index_[node_infos_[i]->name()] = i;
  return true;
}

bool Snapshot::addPod(std::string_view node, PodInfoPtr pod) {
  auto it = index_.find(std::string(node));
  if (it == index_.end()) return false;
  NodeInfo& info = *node_infos_[it->second];
  info.addPod(std::move(pod));
  generations_[it->second] = info.generation();
  return true;
}

bool Snapshot::removePod(std::string_view node, const api::Pod& pod) {
  auto it = index_.find(std::string(node));
  if (it == index_.end()) return false;
  NodeInfo& info = *node_infos_[it->second];
  const bool removed = info.removePod(pod);
  generations_[it->second] = info.generation();
  return removed;
}

const NodeInfo* Snapshot::get(std::string_view name) const {
  auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : node_infos_[it->second].get();
}

}  // namespace berth::framework
