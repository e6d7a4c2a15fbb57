#pragma once
// TopologyCounts: a number per topology domain, a (topologyKey, value) pair of node labels, as
// InterPodAffinity's PreFilter and PreScore accumulate them over the cluster. Values are views of
// the snapshot's node labels (which outlive the cycle state) in hash maps: thousands of hostname
// domains are counted and looked up every cycle, and Filter and Score, run per node, allocate
// nothing.

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pkg/labels/label_set.h"

namespace berth::plugins::interpodaffinity {

class TopologyCounts {
 public:
  using Values = std::unordered_map<std::string_view, int64_t>;
  using ByKey = std::vector<std::pair<std::string, Values>>;  // a term or two: a short list

  // Adds `delta` at (key, the node's value of key), if the node has the key. With `dropZeros`, an
  // entry back at 0 is removed, so that empty() means "no domain counted".
  void add(const labels::LabelSet& node, std::string_view key, int64_t delta, bool dropZeros) {
    if (auto value = node.find(key)) addValue(key, *value, delta, dropZeros);
  }
  // Adds `delta` at (key, value); the value must outlive these counts.
  void addValue(std::string_view key, std::string_view value, int64_t delta, bool dropZeros) {
    auto k = find(key);
    if (k == by_key_.end()) {
      by_key_.emplace_back(std::string(key), Values{});
      k = by_key_.end() - 1;
    }
    auto v = k->second.try_emplace(value, 0).first;
    v->second += delta;
    if (dropZeros && v->second == 0) {
      k->second.erase(v);
      if (k->second.empty()) by_key_.erase(k);
    }
  }

  // The count of the node's domain for key; 0 when the node lacks the key or nothing was counted.
  int64_t get(const labels::LabelSet& node, std::string_view key) const {
    auto k = find(key);
    if (k == by_key_.end()) return 0;
    auto value = node.find(key);
    if (!value) return 0;
    auto v = k->second.find(*value);
    return v == k->second.end() ? 0 : v->second;
  }

  bool empty() const { return by_key_.empty(); }
  const ByKey& byKey() const { return by_key_; }

 private:
  ByKey::iterator find(std::string_view key) {
    return std::find_if(by_key_.begin(), by_key_.end(),
                        [&](const auto& e) { return e.first == key; });
  }
  ByKey::const_iterator find(std::string_view key) const {
    return std::find_if(by_key_.begin(), by_key_.end(),
                        [&](const auto& e) { return e.first == key; });
  }

  ByKey by_key_;
};

}  // namespace berth::plugins::interpodaffinity
