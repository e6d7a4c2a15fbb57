#pragma once
// LabelSet: a node's labels as one sorted, contiguous block, for the scheduling hot loop. A
// std::map of heap-allocated strings costs several cache misses per lookup; at thousands of nodes
// per pod those misses dominate. Built once per node, looked up many times.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/types.h"

namespace berth::labels {

class LabelSet {
 public:
  LabelSet() = default;
  explicit LabelSet(const api::StringMap& labels);

  // The value of key, or nullopt. The view is valid while this LabelSet lives, unchanged.
  std::optional<std::string_view> find(std::string_view key) const;
  size_t size() const { return entries_.size(); }
  // Asks the CPU to start loading the entries and characters (a hint; never faults).
  void prefetch() const {
    __builtin_prefetch(entries_.data());
    __builtin_prefetch(chars_.data());
  }

 private:
  struct Entry {
    uint32_t keyOffset, keyLength, valueOffset, valueLength;
  };
  std::string_view key(const Entry& e) const { return {chars_.data() + e.keyOffset, e.keyLength}; }

  std::string chars_;           // every key and value, back to back
  std::vector<Entry> entries_;  // sorted by key
};

}  // namespace berth::labels
