#include "pkg/algorithm/equivalence_cache.h"

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>

#include "pkg/api/decode.h"
#include "pkg/log/log.h"

namespace berth::algorithm {

std::string EquivalenceCache::classKey(const api::Pod& pod) {
  nlohmann::json key = {{"namespace", pod.metadata.namespace_},
                        {"labels", pod.metadata.labels},
                        {"spec", api::encodePod(pod)["spec"]}};
  return key.dump();
}

EquivalenceCache::Class& EquivalenceCache::lookup(const framework::runtime::Framework& fw,
                                                  std::string key, size_t numNodes) {
  if (std::find(seen_.begin(), seen_.end(), &fw) == seen_.end()) {
    seen_.push_back(&fw);
    for (const std::string& plugin : fw.notNodeLocalPlugins()) {
      log::info(2,
                "Plugin is not node-local: the equivalence cache runs it on every node each cycle",
                {{"profile", fw.profileName()}, {"plugin", plugin}});
    }
  }
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
    c.filters.clear();
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
