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

const framework::StateKey kPreFilterStateKey = framework::makeStateKey("PreFilterInterPodAffinity");
const framework::StateKey kPreScoreStateKey = framework::makeStateKey("PreScoreInterPodAffinity");

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

  std::unique_ptr<framework::StateData> clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }
};

struct PreScoreState final : framework::StateData {
  TopologyCounts topologyScore;
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

    // Existing pods' required anti-affinity: only the nodes that hold such pods.
    for (const framework::NodeInfo* node : snapshot->nodesWithRequiredAntiAffinity()) {
      for (const auto& existing : node->podsWithRequiredAntiAffinity()) {
        for (const AffinityTerm& t : existing->affinity->requiredAntiAffinity) {
          if (t.matches(*pod, &nsLabels)) {
            s->existingAntiAffinityCounts.add(node->labels(), t.topologyKey, 1, true);
          }
        }
      }
    }
    if (s->requiredAffinity.empty() && s->requiredAntiAffinity.empty()) {
      if (s->existingAntiAffinityCounts.empty()) return Status::skip();
    } else {
      for (const auto& node : snapshot->nodeInfos()) {
        for (const auto& existing : node->pods()) {
          if (framework::matchesAllTerms(s->requiredAffinity, *existing->pod)) {
            for (const AffinityTerm& t : s->requiredAffinity) {
              s->affinityCounts.add(node->labels(), t.topologyKey, 1, true);
            }
          }
          for (const AffinityTerm& t : s->requiredAntiAffinity) {
            if (t.matches(*existing->pod, nullptr)) {
              s->antiAffinityCounts.add(node->labels(), t.topologyKey, 1, true);
            }
          }
        }
      }
    }
    s->matchesOwnAffinity = framework::matchesAllTerms(s->requiredAffinity, *pod);
    state.write(kPreFilterStateKey, std::move(s));
    return Status::success();
  }

  Status filter(const framework::CycleState& state, const framework::PodInfo&,
                const framework::NodeInfo& node) const override {
    if (node.node() == nullptr) return Status::error("node not found");
    const auto* s = state.readAs<PreFilterState>(kPreFilterStateKey);
    if (s == nullptr) {
      return Status::error("reading \"PreFilterInterPodAffinity\" from cycleState: not found");
    }
    if (!satisfiesPodAffinity(*s, node)) {
      return Status(Code::UnschedulableAndUnresolvable, kErrReasonAffinityRulesNotMatch);
    }
    if (!satisfiesPodAntiAffinity(*s, node)) {
      return Status(Code::Unschedulable, kErrReasonAntiAffinityRulesNotMatch);
    }
    if (!satisfiesExistingPodsAntiAffinity(*s, node)) {
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
    // Scores every domain of the cluster, not only the feasible nodes': a domain's score is the
    // same whichever of its nodes is scored.
    auto scoreNode = [&](const framework::NodeInfo& node) {
      const labels::LabelSet& labels = node.labels();
      if (labels.size() == 0) return;
      const auto& existingPods = hasConstraints ? node.pods() : node.podsWithAffinity();
      for (const auto& existing : existingPods) {
        for (const auto& t : preferred) {
          if (t.term.matches(*existing->pod, nullptr)) {
            score.add(labels, t.term.topologyKey, t.weight, false);
          }
        }
        for (const auto& t : preferredAnti) {
          if (t.term.matches(*existing->pod, nullptr)) {
            score.add(labels, t.term.topologyKey, -t.weight, false);
          }
        }
        const framework::PodAffinityTerms& theirs = existing->affinityTerms();
        if (args_.hardPodAffinityWeight > 0) {
          for (const auto& t : theirs.requiredAffinity) {
            if (t.matches(*pod, &nsLabels)) {
              score.add(labels, t.topologyKey, args_.hardPodAffinityWeight, false);
            }
          }
        }
        for (const auto& t : theirs.preferredAffinity) {
          if (t.term.matches(*pod, &nsLabels)) {
            score.add(labels, t.term.topologyKey, t.weight, false);
          }
        }
        for (const auto& t : theirs.preferredAntiAffinity) {
          if (t.term.matches(*pod, &nsLabels)) {
            score.add(labels, t.term.topologyKey, -t.weight, false);
          }
        }
      }
    };
    if (hasConstraints) {
      for (const auto& node : snapshot->nodeInfos()) scoreNode(*node);
    } else {
      for (const framework::NodeInfo* node : snapshot->nodesWithPodAffinity()) scoreNode(*node);
    }
    if (score.empty()) return Status::skip();
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
    return Status::success();
  }

  // Rescales to [0, 100] between the lowest and the highest raw score; all 0 when they are equal.
  Status normalizeScores(const framework::CycleState& state, const framework::PodInfo&,
                         std::vector<int64_t>& scores) const override {
    const auto* s = state.readAs<PreScoreState>(kPreScoreStateKey);
    if (s == nullptr) {
      return Status::error("reading \"PreScoreInterPodAffinity\" from cycleState: not found");
    }
    if (s->topologyScore.empty() || scores.empty()) return Status::success();
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

  static bool satisfiesPodAffinity(const PreFilterState& s, const framework::NodeInfo& node) {
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

  static bool satisfiesPodAntiAffinity(const PreFilterState& s, const framework::NodeInfo& node) {
    if (s.antiAffinityCounts.empty()) return true;
    return std::none_of(s.requiredAntiAffinity.begin(), s.requiredAntiAffinity.end(),
                        [&](const AffinityTerm& t) {
                          return s.antiAffinityCounts.get(node.labels(), t.topologyKey) > 0;
                        });
  }

  static bool satisfiesExistingPodsAntiAffinity(const PreFilterState& s,
                                                const framework::NodeInfo& node) {
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
