#include "pkg/plugins/interpodaffinity/inter_pod_affinity.h"

#include <algorithm>

#include "pkg/framework/snapshot.h"
#include "pkg/plugins/interpodaffinity/topology_counts.h"
#include "pkg/plugins/names.h"

namespace berth::plugins::interpodaffinity {
namespace {

using framework::AffinityTerm;
using framework::Code;
using framework::Status;
using framework::WeightedAffinityTerm;
using TermKind = framework::InterPodIndex::TermKind;

const framework::StateKey kPreFilterStateKey = framework::makeStateKey("PreFilterInterPodAffinity");
const framework::StateKey kPreScoreStateKey = framework::makeStateKey("PreScoreInterPodAffinity");

// Counts read from the snapshot's index: the sum of one KeyCounts per namespace of a term, by
// value, or by value id for the snapshot's own NodeInfos (an array read at the node's position).
struct IndexedCounts {
  std::vector<const framework::KeyCounts*> parts;
  const std::vector<int32_t>* ids = nullptr;  // the term's key's value id by snapshot position

  int64_t at(std::string_view value) const {
    int64_t n = 0;
    for (const framework::KeyCounts* p : parts) {
      auto it = p->byValue.find(value);
      if (it != p->byValue.end()) n += it->second;
    }
    return n;
  }
  int64_t atId(int32_t id) const {
    int64_t n = 0;
    for (const framework::KeyCounts* p : parts) n += framework::countOf(p->byId, id);
    return n;
  }
  bool allEmpty() const {
    return std::all_of(parts.begin(), parts.end(),
                       [](const framework::KeyCounts* p) { return p->byValue.empty(); });
  }
};

// The node's position in the cycle's snapshot; -1 when it is not the snapshot's NodeInfo.
int64_t positionIn(const framework::CycleState& state, const framework::NodeInfo& node) {
  const framework::Snapshot* snapshot = state.snapshot();
  return snapshot != nullptr ? snapshot->findPosition(node) : -1;
}

struct PreFilterState final : framework::StateData {
  // Over the existing pods' required anti-affinity terms that match the incoming pod.
  TopologyCounts existingAntiAffinityCounts;
  // Over the existing pods that match all the incoming pod's required affinity terms.
  TopologyCounts affinityCounts;
  // Over the existing pods that match each of the incoming pod's required anti-affinity terms.
  TopologyCounts antiAffinityCounts;
  // The incoming pod's required terms, namespaceSelector merged into namespaces.
  std::vector<AffinityTerm> requiredAffinity;
  std::vector<AffinityTerm> requiredAntiAffinity;
  bool matchesOwnAffinity = false;  // the first-pod exception's condition on the pod itself

  // Until AddPod or RemovePod changes them, the counts are read from the snapshot's index instead
  // of the three TopologyCounts above: the groups of existing terms that match the pod, and, by
  // term, the pods each of the pod's own terms selects.
  bool indexedExisting = false;
  std::vector<const framework::InterPodIndex::TermGroup*> existingAntiAffinityGroups;
  std::vector<const std::vector<int32_t>*> existingAntiAffinityIds;  // by group: its key's ids
  bool indexedOwn = false;
  std::vector<IndexedCounts> affinityParts;      // by required affinity term (one)
  std::vector<IndexedCounts> antiAffinityParts;  // by required anti-affinity term

  std::unique_ptr<framework::StateData> clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }

  // Copies the index's counts into the TopologyCounts, so that they can change.
  void ownCounts() {
    if (indexedExisting) {
      for (const auto* g : existingAntiAffinityGroups) {
        for (const auto& [value, n] : g->counts) {
          existingAntiAffinityCounts.addValue(g->term.topologyKey, value, n, true);
        }
      }
      existingAntiAffinityGroups.clear();
      existingAntiAffinityIds.clear();
      indexedExisting = false;
    }
    if (indexedOwn) {
      auto copy = [](const std::vector<AffinityTerm>& terms, const std::vector<IndexedCounts>& by,
                     TopologyCounts& out) {
        for (size_t i = 0; i < terms.size(); ++i) {
          for (const framework::KeyCounts* p : by[i].parts) {
            for (const auto& [value, n] : p->byValue) {
              out.addValue(terms[i].topologyKey, value, n, true);
            }
          }
        }
      };
      copy(requiredAffinity, affinityParts, affinityCounts);
      copy(requiredAntiAffinity, antiAffinityParts, antiAffinityCounts);
      affinityParts.clear();
      antiAffinityParts.clear();
      indexedOwn = false;
    }
  }
};

// The one equality (key=value) that is a term's whole selector, when the term names its
// namespaces: the index then holds the term's counts. Null otherwise.
const labels::Selector::Requirement* soleEquality(const AffinityTerm& t) {
  if (!t.selector || t.namespaceSelector || t.namespaces.empty()) return nullptr;
  const auto& reqs = t.selector->requirements();
  if (reqs.size() != 1) return nullptr;
  const labels::Selector::Requirement& r = reqs[0];
  const bool equality = r.op == labels::Selector::Op::Equals || r.op == labels::Selector::Op::In;
  return equality && r.values.size() == 1 ? &r : nullptr;
}

// The index's counts of the pods a term selects (soleEquality(t) must hold), by the term's key.
IndexedCounts indexedCounts(const framework::InterPodIndex& index, const AffinityTerm& t) {
  const labels::Selector::Requirement& r = *soleEquality(t);
  IndexedCounts out;
  out.ids = &index.topologyIds(t.topologyKey);
  for (const std::string& ns : t.namespaces) {
    const framework::KeyCounts& c = index.labelKeyCounts(ns, r.key, r.values[0], t.topologyKey);
    if (!c.byValue.empty()) out.parts.push_back(&c);
  }
  return out;
}

struct PreScoreState final : framework::StateData {
  // Weights summed per domain for the terms matched pod by pod.
  TopologyCounts topologyScore;
  // The index's counts, each domain's count times `weight`, for the others: Score looks them up
  // rather than PreScore copying thousands of domains every cycle.
  struct Weighted {
    std::string topologyKey;
    const framework::DomainCounts* counts;    // never empty
    const framework::CountsById* countsById;  // the same by value id
    const std::vector<int32_t>* ids;          // the key's value id by snapshot position
    int64_t weight;
  };
  std::vector<Weighted> weighted;

  bool empty() const { return topologyScore.empty() && weighted.empty(); }
  std::unique_ptr<framework::StateData> clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
};

bool hasPreferredTerms(const api::Pod& pod) {
  const auto& a = pod.spec.affinity;
  return a && ((a->podAffinity &&
                !a->podAffinity->preferredDuringSchedulingIgnoredDuringExecution.empty()) ||
               (a->podAntiAffinity &&
                !a->podAntiAffinity->preferredDuringSchedulingIgnoredDuringExecution.empty()));
}

bool isUnassigned(const api::Pod* pod) {
  return pod != nullptr && pod->spec.nodeName.empty() && pod->status.nominatedNodeName.empty();
}

class InterPodAffinity final : public framework::PreFilterPlugin,
                               public framework::PreFilterExtensions,
                               public framework::EnqueueExtensions,
                               public framework::FilterPlugin,
                               public framework::PreScorePlugin,
                               public framework::ScorePlugin {
 public:
  InterPodAffinity(const InterPodAffinityArgs& args, const framework::ClusterObjects* objects)
      : args_(args), objects_(objects) {}

  std::string_view name() const override { return names::kInterPodAffinity; }

  std::vector<framework::ClusterEventWithHint> eventsToRegister() const override {
    using framework::ActionType;
    using framework::EventResource;
    framework::ClusterEventWithHint pods{
        framework::ClusterEvent{EventResource::AssignedPod,
                                ActionType::Add | ActionType::UpdatePodLabel | ActionType::Delete}};
    pods.podHint = afterAssignedPodChange;
    framework::ClusterEventWithHint nodes{framework::ClusterEvent{
        EventResource::Node, ActionType::Add | ActionType::UpdateNodeLabel}};
    nodes.nodeHint = afterNodeChange;
    return {std::move(pods), std::move(nodes)};
  }

  Status preFilter(framework::CycleState& state, const framework::PodInfo& pod,
                   framework::PreFilterResult&) const override {
    const framework::Snapshot* snapshot = state.snapshot();
    if (snapshot == nullptr) return Status::error("InterPodAffinity: no snapshot in the cycle");
    const framework::PodAffinityTerms& terms = pod.affinityTerms();
    if (!terms.error.empty()) {
      return Status(Code::UnschedulableAndUnresolvable, "parsing pod: " + terms.error);
    }
    // Most pods have no terms and most clusters few pods with required anti-affinity: decide that
    // before allocating anything.
    if (terms.requiredAffinity.empty() && terms.requiredAntiAffinity.empty() &&
        snapshot->nodesWithRequiredAntiAffinity().empty()) {
      return Status::skip();
    }
    auto s = std::make_unique<PreFilterState>();
    s->requiredAffinity = terms.requiredAffinity;
    s->requiredAntiAffinity = terms.requiredAntiAffinity;
    for (auto& t : s->requiredAffinity) mergeNamespaces(t);
    for (auto& t : s->requiredAntiAffinity) mergeNamespaces(t);
    const api::StringMap nsLabels = namespaceLabels(pod->metadata.namespace_);

    // Existing pods' required anti-affinity: each group of identical terms matched once.
    const framework::InterPodIndex& index = snapshot->interPodIndex();
    s->indexedExisting = true;
    if (!snapshot->nodesWithRequiredAntiAffinity().empty()) {
      for (const auto& [key, g] : index.groups(TermKind::RequiredAntiAffinity)) {
        if (!g.counts.empty() && g.term.matches(*pod, &nsLabels)) {
          s->existingAntiAffinityGroups.push_back(&g);
          s->existingAntiAffinityIds.push_back(&index.topologyIds(g.term.topologyKey));
        }
      }
    }
    if (s->requiredAffinity.empty() && s->requiredAntiAffinity.empty()) {
      if (s->existingAntiAffinityGroups.empty()) return Status::skip();
    } else if (ownTermsIndexed(*s)) {
      s->indexedOwn = true;
      for (const AffinityTerm& t : s->requiredAffinity) {
        s->affinityParts.push_back(indexedCounts(index, t));
      }
      for (const AffinityTerm& t : s->requiredAntiAffinity) {
        s->antiAffinityParts.push_back(indexedCounts(index, t));
      }
    } else {
      for (const auto& node : snapshot->nodeInfos()) {
        for (const auto& existing : node->pods()) countOwnTerms(*s, *existing->pod, *node, 1);
      }
    }
    s->matchesOwnAffinity = framework::matchesAllTerms(s->requiredAffinity, *pod);
    state.write(kPreFilterStateKey, std::move(s));
    return Status::success();
  }

  Status addPod(framework::CycleState& state, const framework::PodInfo& pod,
                const framework::PodInfo& podToAdd,
                const framework::NodeInfo& node) const override {
    return updateWithPod(state, pod, podToAdd, node, 1);
  }

  Status removePod(framework::CycleState& state, const framework::PodInfo& pod,
                   const framework::PodInfo& podToRemove,
                   const framework::NodeInfo& node) const override {
    return updateWithPod(state, pod, podToRemove, node, -1);
  }

  Status filter(const framework::CycleState& state, const framework::PodInfo&,
                const framework::NodeInfo& node) const override {
    if (node.node() == nullptr) return Status::error("node not found");
    const auto* s = state.readAs<PreFilterState>(kPreFilterStateKey);
    if (s == nullptr) {
      return Status::error("reading \"PreFilterInterPodAffinity\" from cycleState: not found");
    }
    const int64_t position = positionIn(state, node);
    if (!satisfiesPodAffinity(*s, node, position)) {
      return Status(Code::UnschedulableAndUnresolvable, kErrReasonAffinityRulesNotMatch);
    }
    if (!satisfiesPodAntiAffinity(*s, node, position)) {
      return Status(Code::Unschedulable, kErrReasonAntiAffinityRulesNotMatch);
    }
    if (!satisfiesExistingPodsAntiAffinity(*s, node, position)) {
      return Status(Code::Unschedulable, kErrReasonExistingAntiAffinityRulesNotMatch);
    }
    return Status::success();
  }

  Status preScore(framework::CycleState& state, const framework::PodInfo& pod,
                  const std::vector<const framework::NodeInfo*>&) const override {
    const bool hasConstraints = hasPreferredTerms(*pod);
    if (args_.ignorePreferredTermsOfExistingPods && !hasConstraints) return Status::skip();
    const framework::Snapshot* snapshot = state.snapshot();
    if (snapshot == nullptr) return Status::error("InterPodAffinity: no snapshot in the cycle");
    if (!hasConstraints && snapshot->nodesWithPodAffinity().empty()) return Status::skip();
    const framework::PodAffinityTerms& terms = pod.affinityTerms();
    if (!terms.error.empty()) return Status::error("failed to parse pod: " + terms.error);
    std::vector<WeightedAffinityTerm> preferred = terms.preferredAffinity;
    std::vector<WeightedAffinityTerm> preferredAnti = terms.preferredAntiAffinity;
    for (auto& t : preferred) mergeNamespaces(t.term);
    for (auto& t : preferredAnti) mergeNamespaces(t.term);
    const api::StringMap nsLabels = namespaceLabels(pod->metadata.namespace_);

    auto s = std::make_unique<PreScoreState>();
    TopologyCounts& score = s->topologyScore;
    const framework::InterPodIndex& index = snapshot->interPodIndex();
    // Scores every domain of the cluster, not only the feasible nodes': a domain's score is the
    // same whichever of its nodes is scored. The index counts each domain's pods for most terms;
    // the others are matched against every pod.
    std::vector<std::pair<const AffinityTerm*, int64_t>> unindexed;
    auto addTerm = [&](const WeightedAffinityTerm& t, int64_t sign) {
      if (soleEquality(t.term) == nullptr) {
        unindexed.emplace_back(&t.term, sign * t.weight);
        return;
      }
      const IndexedCounts counts = indexedCounts(index, t.term);
      for (const framework::KeyCounts* part : counts.parts) {
        s->weighted.push_back(
            {t.term.topologyKey, &part->byValue, &part->byId, counts.ids, sign * t.weight});
      }
    };
    for (const auto& t : preferred) addTerm(t, 1);
    for (const auto& t : preferredAnti) addTerm(t, -1);
    if (!unindexed.empty()) {
      for (const auto& node : snapshot->nodeInfos()) {
        for (const auto& existing : node->pods()) {
          for (const auto& [term, weight] : unindexed) {
            if (term->matches(*existing->pod, nullptr)) {
              score.add(node->labels(), term->topologyKey, weight, false);
            }
          }
        }
      }
    }
    // The existing pods' terms, a group of identical terms at a time.
    auto addGroups = [&](TermKind kind, int64_t weight) {
      for (const auto& [key, g] : index.groups(kind)) {
        if (g.counts.empty() || !g.term.matches(*pod, &nsLabels)) continue;
        const int64_t w = kind == TermKind::RequiredAffinity ? weight : weight * g.weight;
        s->weighted.push_back({g.term.topologyKey, &g.counts, &g.countsById,
                               &index.topologyIds(g.term.topologyKey), w});
      }
    };
    if (args_.hardPodAffinityWeight > 0) {
      addGroups(TermKind::RequiredAffinity, args_.hardPodAffinityWeight);
    }
    addGroups(TermKind::Preferred, 1);
    addGroups(TermKind::PreferredAnti, -1);
    if (s->empty()) return Status::skip();
    state.write(kPreScoreStateKey, std::move(s));
    return Status::success();
  }

  Status score(const framework::CycleState& state, const framework::PodInfo&,
               const framework::NodeInfo& node, int64_t& out) const override {
    const auto* s = state.readAs<PreScoreState>(kPreScoreStateKey);
    if (s == nullptr) {
      return Status::error("reading \"PreScoreInterPodAffinity\" from cycleState: not found");
    }
    out = 0;
    for (const auto& [key, values] : s->topologyScore.byKey()) {
      auto value = node.labels().find(key);
      if (!value) continue;
      auto v = values.find(*value);
      if (v != values.end()) out += v->second;
    }
    if (const int64_t p = positionIn(state, node); p >= 0) {
      for (const PreScoreState::Weighted& w : s->weighted) {
        out += w.weight * framework::countOf(*w.countsById, (*w.ids)[static_cast<size_t>(p)]);
      }
      return Status::success();
    }
    for (const PreScoreState::Weighted& w : s->weighted) {
      auto value = node.labels().find(w.topologyKey);
      if (!value) continue;
      auto v = w.counts->find(*value);
      if (v != w.counts->end()) out += w.weight * v->second;
    }
    return Status::success();
  }

  // Rescales to [0, 100] between the lowest and the highest raw score; all 0 when they are equal.
  Status normalizeScores(const framework::CycleState& state, const framework::PodInfo&,
                         std::vector<int64_t>& scores) const override {
    const auto* s = state.readAs<PreScoreState>(kPreScoreStateKey);
    if (s == nullptr) {
      return Status::error("reading \"PreScoreInterPodAffinity\" from cycleState: not found");
    }
    if (s->empty() || scores.empty()) return Status::success();
    const auto [lo, hi] = std::minmax_element(scores.begin(), scores.end());
    const int64_t min = *lo;
    const int64_t diff = *hi - min;
    for (int64_t& score : scores) {
      // Divide, then multiply, then truncate, as upstream: its rounding is part of the result.
      double f = 0;
      if (diff > 0) {
        f = static_cast<double>(framework::kMaxNodeScore) *
            (static_cast<double>(score - min) / static_cast<double>(diff));
      }
      score = static_cast<int64_t>(f);
    }
    return Status::success();
  }

 private:
  // An incoming pod's term: the namespaces its namespaceSelector picks join `namespaces`, and the
  // selector then selects nothing (an empty selector stays: it means every namespace).
  void mergeNamespaces(AffinityTerm& t) const {
    if (!t.namespaceSelector || t.namespaceSelector->empty()) return;
    if (objects_ != nullptr) {
      for (const auto& ns : objects_->listNamespaces()) {
        if (t.namespaceSelector->matches(ns->metadata.labels)) {
          t.namespaces.push_back(ns->metadata.name);
        }
      }
    }
    std::sort(t.namespaces.begin(), t.namespaces.end());
    t.namespaces.erase(std::unique(t.namespaces.begin(), t.namespaces.end()), t.namespaces.end());
    t.namespaceSelector.reset();
  }

  // The labels of the namespace; none when it is unknown.
  api::StringMap namespaceLabels(const std::string& ns) const {
    if (objects_ == nullptr) return {};
    api::NamespacePtr n = objects_->getNamespace(ns);
    return n ? n->metadata.labels : api::StringMap{};
  }

  // The index holds the counts of the pod's own terms: at most one affinity term (all must match
  // one pod) and every term a single equality over named namespaces.
  static bool ownTermsIndexed(const PreFilterState& s) {
    auto indexed = [](const AffinityTerm& t) { return soleEquality(t) != nullptr; };
    return s.requiredAffinity.size() <= 1 &&
           std::all_of(s.requiredAffinity.begin(), s.requiredAffinity.end(), indexed) &&
           std::all_of(s.requiredAntiAffinity.begin(), s.requiredAntiAffinity.end(), indexed);
  }

  // Counts `existing` on `node` (delta +1 or -1) for the incoming pod's own terms.
  static void countOwnTerms(PreFilterState& s, const api::Pod& existing,
                            const framework::NodeInfo& node, int64_t delta) {
    if (framework::matchesAllTerms(s.requiredAffinity, existing)) {
      for (const AffinityTerm& t : s.requiredAffinity) {
        s.affinityCounts.add(node.labels(), t.topologyKey, delta, true);
      }
    }
    for (const AffinityTerm& t : s.requiredAntiAffinity) {
      if (t.matches(existing, nullptr)) {
        s.antiAffinityCounts.add(node.labels(), t.topologyKey, delta, true);
      }
    }
  }

  // AddPod (+1) and RemovePod (-1): the counts as PreFilter would have found them with `other` on
  // `node`, or without it (upstream's updateWithPod).
  Status updateWithPod(framework::CycleState& state, const framework::PodInfo& pod,
                       const framework::PodInfo& other, const framework::NodeInfo& node,
                       int64_t delta) const {
    const auto* current = state.readAs<PreFilterState>(kPreFilterStateKey);
    if (current == nullptr) {
      return Status::error("reading \"PreFilterInterPodAffinity\" from cycleState: not found");
    }
    auto s = std::make_unique<PreFilterState>(*current);
    s->ownCounts();
    // Views of the labels outlive the state only if they are the snapshot's.
    const framework::Snapshot* snapshot = state.snapshot();
    const framework::NodeInfo* held = snapshot ? snapshot->get(node.name()) : nullptr;
    const framework::NodeInfo& stable = held ? *held : node;
    const api::StringMap nsLabels = namespaceLabels(pod->metadata.namespace_);
    for (const AffinityTerm& t : other.affinityTerms().requiredAntiAffinity) {
      if (t.matches(*pod, &nsLabels)) {
        s->existingAntiAffinityCounts.add(stable.labels(), t.topologyKey, delta, true);
      }
    }
    countOwnTerms(*s, *other.pod, stable, delta);
    state.write(kPreFilterStateKey, std::move(s));
    return Status::success();
  }

  static bool satisfiesPodAffinity(const PreFilterState& s, const framework::NodeInfo& node,
                                   int64_t position) {
    if (s.indexedOwn && !s.requiredAffinity.empty()) {
      const IndexedCounts& counts = s.affinityParts.front();
      if (position >= 0) {
        const int32_t id = (*counts.ids)[static_cast<size_t>(position)];
        if (id < 0) return false;
        return counts.atId(id) > 0 || (counts.allEmpty() && s.matchesOwnAffinity);
      }
      auto value = node.labels().find(s.requiredAffinity.front().topologyKey);
      if (!value) return false;
      return counts.at(*value) > 0 || (counts.allEmpty() && s.matchesOwnAffinity);
    }
    bool podsExist = true;
    for (const AffinityTerm& t : s.requiredAffinity) {
      // The node must carry every term's topology key.
      if (!node.labels().find(t.topologyKey)) return false;
      if (s.affinityCounts.get(node.labels(), t.topologyKey) <= 0) podsExist = false;
    }
    // The first of a set of pods with affinity to each other: no pod anywhere matches yet, so the
    // pod may go where its topology keys exist if it matches its own terms.
    return podsExist || (s.affinityCounts.empty() && s.matchesOwnAffinity);
  }

  static bool satisfiesPodAntiAffinity(const PreFilterState& s, const framework::NodeInfo& node,
                                       int64_t position) {
    if (s.indexedOwn) {
      for (size_t i = 0; i < s.requiredAntiAffinity.size(); ++i) {
        const IndexedCounts& counts = s.antiAffinityParts[i];
        if (position >= 0) {
          if (counts.atId((*counts.ids)[static_cast<size_t>(position)]) > 0) return false;
          continue;
        }
        auto value = node.labels().find(s.requiredAntiAffinity[i].topologyKey);
        if (value && counts.at(*value) > 0) return false;
      }
      return true;
    }
    if (s.antiAffinityCounts.empty()) return true;
    return std::none_of(s.requiredAntiAffinity.begin(), s.requiredAntiAffinity.end(),
                        [&](const AffinityTerm& t) {
                          return s.antiAffinityCounts.get(node.labels(), t.topologyKey) > 0;
                        });
  }

  static bool satisfiesExistingPodsAntiAffinity(const PreFilterState& s,
                                                const framework::NodeInfo& node, int64_t position) {
    if (s.indexedExisting && position >= 0) {
      const auto p = static_cast<size_t>(position);
      for (size_t g = 0; g < s.existingAntiAffinityGroups.size(); ++g) {
        const int32_t id = (*s.existingAntiAffinityIds[g])[p];
        if (framework::countOf(s.existingAntiAffinityGroups[g]->countsById, id) != 0) return false;
      }
      return true;
    }
    if (s.indexedExisting) {
      return std::none_of(s.existingAntiAffinityGroups.begin(), s.existingAntiAffinityGroups.end(),
                          [&](const framework::InterPodIndex::TermGroup* g) {
                            auto value = node.labels().find(g->term.topologyKey);
                            return value && g->counts.find(*value) != g->counts.end();
                          });
    }
    for (const auto& [key, values] : s.existingAntiAffinityCounts.byKey()) {
      auto value = node.labels().find(key);
      if (!value) continue;
      auto v = values.find(*value);
      if (v != values.end() && v->second > 0) return false;
    }
    return true;
  }

  // An assigned pod added, relabelled or deleted: queue when it may now satisfy the pod's affinity
  // or have stopped blocking it (upstream's isSchedulableAfterAssignedPodChange).
  static framework::QueueingHint afterAssignedPodChange(const api::Pod& pod, const api::Pod* before,
                                                        const api::Pod* after) {
    using framework::QueueingHint;
    if (isUnassigned(before) || isUnassigned(after)) return QueueingHint::Skip;
    const framework::PodAffinityTerms terms = framework::PodAffinityTerms::compile(pod);
    if (!terms.error.empty()) return QueueingHint::Queue;
    if (before != nullptr && after != nullptr) {
      if (!framework::matchesAllTerms(terms.requiredAffinity, *before) &&
          framework::matchesAllTerms(terms.requiredAffinity, *after)) {
        return QueueingHint::Queue;
      }
      if (framework::matchesAnyTerm(terms.requiredAntiAffinity, *before) &&
          !framework::matchesAnyTerm(terms.requiredAntiAffinity, *after)) {
        return QueueingHint::Queue;
      }
      return QueueingHint::Skip;
    }
    if (after != nullptr) {
      return framework::matchesAllTerms(terms.requiredAffinity, *after) ? QueueingHint::Queue
                                                                        : QueueingHint::Skip;
    }
    if (before == nullptr) return QueueingHint::Queue;
    if (framework::matchesAnyTerm(terms.requiredAntiAffinity, *before)) return QueueingHint::Queue;
    const framework::PodAffinityTerms theirs = framework::PodAffinityTerms::compile(*before);
    if (!theirs.error.empty()) return QueueingHint::Queue;
    return framework::matchesAnyTerm(theirs.requiredAntiAffinity, pod) ? QueueingHint::Queue
                                                                       : QueueingHint::Skip;
  }

  // A node added or relabelled: queue when an affinity topology key appeared or moved to another
  // value, or an anti-affinity key disappeared or moved (any new node, for anti-affinity).
  static framework::QueueingHint afterNodeChange(const api::Pod& pod, const api::Node* before,
                                                 const api::Node* after) {
    using framework::QueueingHint;
    if (after == nullptr) return QueueingHint::Skip;
    const framework::PodAffinityTerms terms = framework::PodAffinityTerms::compile(pod);
    if (!terms.error.empty()) return QueueingHint::Queue;
    auto valueOf = [](const api::Node& n, const std::string& key) -> const std::string* {
      auto it = n.metadata.labels.find(key);
      return it == n.metadata.labels.end() ? nullptr : &it->second;
    };
    for (const AffinityTerm& t : terms.requiredAffinity) {
      const std::string* now = valueOf(*after, t.topologyKey);
      if (now == nullptr) continue;
      const std::string* was = before ? valueOf(*before, t.topologyKey) : nullptr;
      if (was == nullptr || *was != *now) return QueueingHint::Queue;
    }
    for (const AffinityTerm& t : terms.requiredAntiAffinity) {
      if (before == nullptr) return QueueingHint::Queue;
      const std::string* was = valueOf(*before, t.topologyKey);
      if (was == nullptr) continue;
      const std::string* now = valueOf(*after, t.topologyKey);
      if (now == nullptr || *was != *now) return QueueingHint::Queue;
    }
    return QueueingHint::Skip;
  }

  InterPodAffinityArgs args_;
  const framework::ClusterObjects* objects_;  // not owned; may be null
};

}  // namespace

util::Result<framework::PluginPtr> newInterPodAffinity(const InterPodAffinityArgs& args,
                                                       const framework::Handle& handle) {
  return framework::PluginPtr(std::make_unique<InterPodAffinity>(args, handle.objects));
}

}  // namespace berth::plugins::interpodaffinity
