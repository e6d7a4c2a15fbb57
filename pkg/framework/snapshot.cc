#include "pkg/framework/snapshot.h"

#include <cstddef>

namespace berth::framework {

Snapshot Snapshot::build(const std::vector<api::NodePtr>& nodes,
                         const std::vector<PodInfoPtr>& boundPods,
                         std::vector<PodInfoPtr>* orphans) {
  Snapshot s;
  for (const auto& n : nodes) s.addNodeInfo(std::make_shared<NodeInfo>(n));
  for (const auto& p : boundPods) {
    if (NodeInfo* info = s.get(p->pod->spec.nodeName)) {
      info->addPod(p);
    } else if (orphans) {
      orphans->push_back(p);
    }
  }
  return s;
}

void Snapshot::addNodeInfo(NodeInfoPtr info) {
  auto [it, inserted] = index_.try_emplace(info->name(), node_infos_.size());
  if (inserted) {
    node_infos_.push_back(std::move(info));
  } else {
    node_infos_[it->second] = std::move(info);
  }
}

bool Snapshot::removeNodeInfo(std::string_view name) {
  auto it = index_.find(std::string(name));
  if (it == index_.end()) return false;
  const size_t at = it->second;
  index_.erase(it);
  node_infos_.erase(node_infos_.begin() + static_cast<std::ptrdiff_t>(at));
  for (size_t i = at; i < node_infos_.size(); i++) index_[node_infos_[i]->name()] = i;
  return true;
}

NodeInfo* Snapshot::get(std::string_view name) const {
  auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : node_infos_[it->second].get();
}

}  // namespace berth::framework
