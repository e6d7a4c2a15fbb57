#pragma once
// SpreadMemo: the per-node facts PodTopologySpread's PreFilter and PreScore read on every node of
// every cycle (a topology key's value, the pods matching a selector), kept by snapshot position
// and recomputed only where the snapshot's NodeInfo changed (another pointer, or a generation that
// moved) since the last cycle that read them. A cycle then costs the changed nodes plus a few
// passes over small arrays, not a walk over every pod of the cluster.
//
// Thread-safe: a Session holds the memo's lock. The memo keeps the `capacity` most recently used
// entries, so memory stays bounded however many selectors and keys come and go.

#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "pkg/framework/snapshot.h"
#include "pkg/plugins/podtopologyspread/constraints.h"

namespace berth::plugins::podtopologyspread {

// One topology key over a snapshot's nodes, by position.
struct TopologyColumn {
  enum Presence : uint8_t { kNoNode = 0, kMissingKey = 1, kHasKey = 2 };
  std::vector<uint8_t> presence;  // Presence
  // The key's value, or "" when the node lacks it (as a cycle looks nodes up with value_or("")),
  // as an id below numIds. Ids are stable while the entry lives.
  std::vector<int32_t> ids;
  size_t numIds = 0;
};

class SpreadMemo {
 public:
  explicit SpreadMemo(size_t capacity = 16) : capacity_(capacity) {}

  // The memo brought up to date with one snapshot, under the memo's lock. References returned stay
  // valid until the session ends; the snapshot must not change meanwhile.
  class Session {
   public:
    Session(SpreadMemo& memo, const framework::Snapshot& snapshot);
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    const TopologyColumn& topology(const std::string& key);
    // countMatchingPods(node's pods, selector, ns) by position.
    const std::vector<int64_t>& podCounts(const std::string& ns, const SpreadSelector& selector);
    // The position of `info` in the snapshot; -1 when it is not one of the snapshot's NodeInfos.
    int64_t positionOf(const framework::NodeInfo* info);

   private:
    SpreadMemo& memo_;
    std::unique_lock<std::mutex> lock_;
    const framework::Snapshot& snapshot_;
    bool indexed_ = false;
  };

  size_t size() const;  // entries held, for tests

 private:
  struct Entry {
    std::string key;
    uint64_t used = 0;
    // What each position was computed from.
    std::vector<const framework::NodeInfo*> infos;
    std::vector<int64_t> generations;
    TopologyColumn column;                              // topology entries
    std::unordered_map<std::string, int32_t> interned;  // topology entries: value -> id
    std::vector<int64_t> counts;                        // pod count entries
  };

  Entry& entry(std::string key);
  void evict();

  const size_t capacity_;
  mutable std::mutex mu_;
  uint64_t tick_ = 0;
  std::list<Entry> entries_;
  // Snapshot NodeInfo -> position, for positionOf.
  std::vector<const framework::NodeInfo*> index_infos_;
  std::unordered_map<const framework::NodeInfo*, uint32_t> index_;
};

}  // namespace berth::plugins::podtopologyspread
