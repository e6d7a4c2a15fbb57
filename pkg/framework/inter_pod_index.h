#pragma once
// InterPodIndex: what InterPodAffinity reads of every pod of the cluster, kept up to date by the
// Snapshot as pods and nodes come and go, so that a scheduling cycle costs the nodes and the
// distinct terms, not every pod:
//
// - the existing pods' (anti-)affinity terms, identical terms grouped (thousands of replicas share
//   one), each group counting its pods per value of its topology key: a cycle matches each group
//   against the incoming pod once;
// - the pods by (namespace, label key, label value), counted per node, and, for each topology key
//   a cycle asked about, per value of that key: the per-domain counts of a selector with one
//   equality are read, not recomputed.
//
// Filter and Score read those counts on every node of every cycle, so each is also kept by a dense
// id of its topology value (`CountsById`): a node's value id is an array read at the node's
// snapshot position (`topologyIds`), and its count another, with no string hashed.
//
// Counts include terminating pods, as InterPodAffinity counts every pod of a node. NodeInfos are
// known by address: the Snapshot removes a NodeInfo's pods before it replaces or drops it.
//
// Thread-safety: mutated by the Snapshot's owner only, between cycles. labelCounts() may build a
// topology key's counts on first use and is safe to call from several threads at once.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pkg/framework/affinity_term.h"
#include "pkg/framework/pod_info.h"

namespace berth::framework {

class NodeInfo;

struct TransparentStringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// A count per topology value; values whose count fell to 0 are dropped.
using DomainCounts =
    std::unordered_map<std::string, int64_t, TransparentStringHash, std::equal_to<>>;

// A count per value id of one topology key (InterPodIndex::topologyIds); ids past the end count 0.
using CountsById = std::vector<int32_t>;

// The count at a value id; 0 for -1 (a node without the key).
inline int64_t countOf(const CountsById& counts, int32_t id) {
  return id >= 0 && static_cast<size_t>(id) < counts.size() ? counts[static_cast<size_t>(id)] : 0;
}

// The counts of one set of pods by one topology key, by value and by value id.
struct KeyCounts {
  DomainCounts byValue;
  CountsById byId;
};

class InterPodIndex {
 public:
  // The four lists of a pod's terms.
  enum class TermKind : uint8_t {
    RequiredAffinity,
    RequiredAntiAffinity,
    Preferred,
    PreferredAnti
  };
  static constexpr size_t kTermKinds = 4;

  // Identical terms of existing pods (same namespaces, namespaceSelector, selector, topology key
  // and, for preferred terms, weight).
  struct TermGroup {
    AffinityTerm term;      // one of them
    int32_t weight = 0;     // preferred terms
    DomainCounts counts;    // pods' terms, by their node's value of term.topologyKey
    CountsById countsById;  // the same, by value id of term.topologyKey
    int64_t terms = 0;      // every pod's term, on nodes with or without the key
  };
  using Groups = std::unordered_map<std::string, TermGroup, TransparentStringHash, std::equal_to<>>;

  InterPodIndex() = default;
  InterPodIndex(const InterPodIndex& other);
  InterPodIndex& operator=(const InterPodIndex& other);

  // The Snapshot's nodes, by their positions in it: addNode appends a node and counts its pods,
  // replaceNode puts `now` (the same node, changed) in `old`'s place, and removeNode uncounts a
  // node's pods and drops its position, the later ones moving down by one.
  void addNode(const NodeInfo& node);
  void replaceNode(size_t position, const NodeInfo& old, const NodeInfo& now);
  void removeNode(size_t position, const NodeInfo& node);
  // One pod on the node at `position` (already added to it, or about to be removed from it).
  void addPod(size_t position, const NodeInfo& node, const PodInfo& pod);
  void removePod(size_t position, const NodeInfo& node, const PodInfo& pod);

  const Groups& groups(TermKind kind) const { return groups_[static_cast<size_t>(kind)]; }

  // The pods in `ns` labelled key=value, by their node's value of topologyKey (nodes without it
  // count nothing). The reference stays valid until the index next changes.
  const DomainCounts& labelCounts(std::string_view ns, std::string_view key, std::string_view value,
                                  std::string_view topologyKey) const;
  // The same counts, also by value id.
  const KeyCounts& labelKeyCounts(std::string_view ns, std::string_view key, std::string_view value,
                                  std::string_view topologyKey) const;
  // Each node's value id of topologyKey by snapshot position, -1 for a node without the key (built
  // on first use). Ids are dense (below the number of nodes ever held at once) and name the same
  // value until no node has it. The reference stays valid until the index next changes.
  const std::vector<int32_t>& topologyIds(std::string_view topologyKey) const;

  // How many (namespace, key, value) entries and term groups are held, for tests.
  size_t numLabelEntries() const { return labels_.size(); }

 private:
  struct LabelEntry {
    std::unordered_map<const NodeInfo*, int64_t> nodes;
    // Built on first use by labelCounts (under mu_), then kept up to date with `nodes`.
    mutable std::unordered_map<std::string, KeyCounts, TransparentStringHash, std::equal_to<>>
        byTopology;
  };
  using Labels =
      std::unordered_map<std::string, LabelEntry, TransparentStringHash, std::equal_to<>>;
  // One topology key's value ids.
  struct Column {
    std::vector<int32_t> ids;  // by position
    std::unordered_map<std::string, int32_t, TransparentStringHash, std::equal_to<>> interned;
    std::vector<int32_t> nodes;  // by id: the nodes with that value
    std::vector<int32_t> free;   // ids no node has (their counts are 0)
    int32_t idOf(const NodeInfo& node, std::string_view key);  // interns; -1 without the key
    void release(int32_t id);
  };
  using Columns = std::unordered_map<std::string, Column, TransparentStringHash, std::equal_to<>>;

  void update(size_t position, const NodeInfo& node, const PodInfo& pod, int64_t delta);
  void updateTerms(size_t position, const NodeInfo& node, TermKind kind, const AffinityTerm& term,
                   int32_t weight, int64_t delta);
  // The column of topologyKey, built over every node when absent (callers hold mu_ or own the
  // index exclusively).
  Column& column(std::string_view topologyKey) const;
  int32_t idAt(std::string_view topologyKey, size_t position) const;
  size_t positionOf(const NodeInfo& node) const;

  Groups groups_[kTermKinds];
  Labels labels_;
  std::vector<const NodeInfo*> nodes_;  // by snapshot position
  mutable Columns columns_;
  mutable std::unique_ptr<std::mutex> mu_ = std::make_unique<std::mutex>();
};

// A string naming a term's namespaces, namespaceSelector, selector and topology key, equal for
// identical terms only.
std::string affinityTermKey(const AffinityTerm& term);

}  // namespace berth::framework
