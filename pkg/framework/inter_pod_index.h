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
    AffinityTerm term;    // one of them
    int32_t weight = 0;   // preferred terms
    DomainCounts counts;  // pods' terms, by their node's value of term.topologyKey
    int64_t terms = 0;    // every pod's term, on nodes with or without the key
  };
  using Groups = std::unordered_map<std::string, TermGroup, TransparentStringHash, std::equal_to<>>;

  InterPodIndex() = default;
  InterPodIndex(const InterPodIndex& other);
  InterPodIndex& operator=(const InterPodIndex& other);

  // Counts every pod of the node, under the node's labels; removeNode undoes exactly that.
  void addNode(const NodeInfo& node);
  void removeNode(const NodeInfo& node);
  // One pod on the node (already added to it, or about to be removed from it).
  void addPod(const NodeInfo& node, const PodInfo& pod);
  void removePod(const NodeInfo& node, const PodInfo& pod);

  const Groups& groups(TermKind kind) const { return groups_[static_cast<size_t>(kind)]; }

  // The pods in `ns` labelled key=value, by their node's value of topologyKey (nodes without it
  // count nothing). The reference stays valid until the index next changes.
  const DomainCounts& labelCounts(std::string_view ns, std::string_view key, std::string_view value,
                                  std::string_view topologyKey) const;

  // How many (namespace, key, value) entries and term groups are held, for tests.
  size_t numLabelEntries() const { return labels_.size(); }

 private:
  struct LabelEntry {
    std::unordered_map<const NodeInfo*, int64_t> nodes;
    // Built on first use by labelCounts (under mu_), then kept up to date with `nodes`.
    mutable std::unordered_map<std::string, DomainCounts, TransparentStringHash, std::equal_to<>>
        byTopology;
  };
  using Labels =
      std::unordered_map<std::string, LabelEntry, TransparentStringHash, std::equal_to<>>;

  void update(const NodeInfo& node, const PodInfo& pod, int64_t delta);
  void updateTerms(const NodeInfo& node, TermKind kind, const AffinityTerm& term, int32_t weight,
                   int64_t delta);

  Groups groups_[kTermKinds];
  Labels labels_;
  mutable std::unique_ptr<std::mutex> mu_ = std::make_unique<std::mutex>();
};

// A string naming a term's namespaces, namespaceSelector, selector and topology key, equal for
// identical terms only.
std::string affinityTermKey(const AffinityTerm& term);

}  // namespace berth::framework
