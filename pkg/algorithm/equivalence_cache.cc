#include "pkg/algorithm/equivalence_cache.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <nlohmann/json.hpp>

#include "pkg/api/decode.h"
#include "pkg/plugins/names.h"

namespace berth::algorithm {

std::string EquivalenceCache::classKey(const api::Pod& pod) {
  nlohmann::json key = {{"namespace", pod.metadata.namespace_},
                        {"labels", pod.metadata.labels},
                        {"spec", api::encodePod(pod)["spec"]}};
  return key.dump();
}

bool EquivalenceCache::nodeLocal(const framework::runtime::Framework& fw) {
  for (const auto& [known, local] : node_local_) {
    if (known == &fw) return local;
  }
  // The plugins that read only the pod and the NodeInfo they are given (and, for normalization, the
  // scores of this cycle). A plugin like InterPodAffinity, which looks at other nodes' pods, must
  // not be added here.
  static constexpr std::array kNodeLocal = {
      plugins::names::kPrioritySort,     plugins::names::kNodeUnschedulable,
      plugins::names::kNodeName,         plugins::names::kTaintToleration,
      plugins::names::kNodeAffinity,     plugins::names::kNodePorts,
      plugins::names::kNodeResourcesFit, plugins::names::kNodeResourcesBalancedAllocation,
      plugins::names::kDefaultBinder,
  };
  bool local = true;
  for (const auto& [point, names] : fw.pluginsByExtensionPoint()) {
    for (const auto& name : names) {
      local = local && std::find(kNodeLocal.begin(), kNodeLocal.end(), name) != kNodeLocal.end();
    }
  }
  node_local_.emplace_back(&fw, local);
  return local;
}

EquivalenceCache::Class& EquivalenceCache::lookup(const framework::runtime::Framework& fw,
                                                  std::string key, size_t numNodes) {
  auto it = std::find_if(classes_.begin(), classes_.end(),
                         [&](const Class& c) { return c.framework == &fw && c.key == key; });
  if (it == classes_.end()) {
    // A new class takes over the least recently used one's storage: at thousands of nodes that is
    // most of a megabyte not allocated again for every pod of a cluster whose pods all differ.
    if (classes_.size() < kClasses) classes_.emplace_back();
    classes_.splice(classes_.begin(), classes_, std::prev(classes_.end()));
    Class& c = classes_.front();
    c.id = next_id_++;
    c.framework = &fw;
    c.key = std::move(key);
    c.plugins.clear();
  } else {
    classes_.splice(classes_.begin(), classes_, it);
  }
  Class& c = classes_.front();
  if (c.nodes.size() != numNodes) {
    // Rows of raw scores are as long as the node list: when it changes length, none is valid.
    for (auto& r : c.nodes) r.scored = false;
    c.nodes.resize(numNodes);
    c.rejections.resize(numNodes);
    c.scores.assign(numNodes * c.plugins.size(), 0);
  }
  return c;
}

}  // namespace berth::algorithm
