#pragma once
// TopologyCounts: a number per topology domain, a (topologyKey, value) pair of node labels, as
// InterPodAffinity's PreFilter and PreScore accumulate them over the cluster. Lookups take views,
// so Filter and Score, run per node, allocate nothing.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "pkg/labels/label_set.h"

namespace berth::plugins::interpodaffinity {

class TopologyCounts {
 public:
  using Values = std::map<std::string, int64_t, std::less<>>;
  using ByKey = std::map<std::string, Values, std::less<>>;

  // Adds `delta` at (key, the node's value of key), if the node has the key. With `dropZeros`, an
  // entry back at 0 is removed, so that empty() means "no domain counted".
  void add(const labels::LabelSet& node, std::string_view key, int64_t delta, bool dropZeros) {
    auto value = node.find(key);
    if (!value) return;
    auto k = by_key_.find(key);
    if (k == by_key_.end()) k = by_key_.emplace(std::string(key), Values{}).first;
    auto v = k->second.find(*value);
    if (v == k->second.end()) v = k->second.emplace(std::string(*value), 0).first;
    v->second += delta;
    if (dropZeros && v->second == 0) {
      k->second.erase(v);
      if (k->second.empty()) by_key_.erase(k);
    }
  }

  // The count of the node's domain for key; 0 when the node lacks the key or nothing was counted.
  int64_t get(const labels::LabelSet& node, std::string_view key) const {
    auto k = by_key_.find(key);
    if (k == by_key_.end()) return 0;
    auto value = node.find(key);
    if (!value) return 0;
    auto v = k->second.find(*value);
    return v == k->second.end() ? 0 : v->second;
  }

  bool empty() const { return by_key_.empty(); }
  const ByKey& byKey() const { return by_key_; }

 private:
  ByKey by_key_;
};

}  // namespace berth::plugins::interpodaffinity
