#include "pkg/plugins/nodeaffinity/node_affinity.h"

#include <algorithm>

#include "pkg/labels/node_affinity.h"
#include "pkg/plugins/names.h"

namespace berth::plugins::nodeaffinity {
namespace {

using framework::Code;
using framework::Status;

const framework::StateKey kPreFilterStateKey = framework::makeStateKey("PreFilterNodeAffinity");
const framework::StateKey kPreScoreStateKey = framework::makeStateKey("PreScoreNodeAffinity");

const api::NodeSelector* requiredAffinity(const api::Pod& pod) {
  const auto& a = pod.spec.affinity;
  if (!a || !a->nodeAffinity || !a->nodeAffinity->requiredDuringSchedulingIgnoredDuringExecution) {
    return nullptr;
  }
  return &*a->nodeAffinity->requiredDuringSchedulingIgnoredDuringExecution;
}

// The pod's nodeSelector and required terms, compiled once per cycle; borrows from the pod.
struct PreFilterState final : framework::StateData {
  explicit PreFilterState(const api::Pod& pod)
      : required(pod.spec.nodeSelector, requiredAffinity(pod)) {}
  labels::RequiredNodeAffinity required;
  std::unique_ptr<framework::StateData> clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }
};

// The pod's preferred terms (and the profile's), weight 0 dropped, compiled; borrows from the pod
// and the plugin.
struct PreScoreState final : framework::StateData {
  std::vector<std::pair<labels::CompiledTerm, int32_t>> terms;
  std::unique_ptr<framework::StateData> clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
};

class NodeAffinity final : public framework::PreFilterPlugin,
                           public framework::EnqueueExtensions,
                           public framework::FilterPlugin,
                           public framework::PreScorePlugin,
                           public framework::ScorePlugin {
 public:
  explicit NodeAffinity(const NodeAffinityArgs& args) {
    if (args.addedAffinity) {
      added_required_ = args.addedAffinity->requiredDuringSchedulingIgnoredDuringExecution;
      added_preferred_ = args.addedAffinity->preferredDuringSchedulingIgnoredDuringExecution;
    }
    if (added_required_) {
      added_required_compiled_.emplace(kNoNodeSelector, &*added_required_);
    }
  }

  std::string_view name() const override { return names::kNodeAffinity; }
  bool nodeLocal() const override { return true; }

  // A node added, or whose labels changed, that now matches the pod's required affinity (and the
  // profile's addedAffinity) and did not before.
  std::vector<framework::ClusterEventWithHint> eventsToRegister() const override {
    using framework::ActionType;
    return {{framework::ClusterEvent{framework::EventResource::Node,
                                     ActionType::Add | ActionType::UpdateNodeLabel},
             framework::queueWhenNodeNowPasses([this](const api::Pod& pod, const api::Node& node) {
               const labels::LabelSet set(node.metadata.labels);
               return (!added_required_compiled_ ||
                       added_required_compiled_->matches(set, node.metadata.name)) &&
                      labels::RequiredNodeAffinity(pod.spec.nodeSelector, requiredAffinity(pod))
                          .matches(set, node.metadata.name);
             })}};
  }

  Status preFilter(framework::CycleState& state, const framework::PodInfo& pod,
                   framework::PreFilterResult& result) const override {
    const api::NodeSelector* required = requiredAffinity(*pod);
    if (required == nullptr && !added_required_ && pod->spec.nodeSelector.empty()) {
      return Status::skip();
    }
    state.write(kPreFilterStateKey, std::make_unique<PreFilterState>(*pod));
    if (required == nullptr || required->nodeSelectorTerms.empty()) return Status::success();

    // Terms naming nodes by metadata.name narrow the nodes to evaluate: within a term the names are
    // intersected (requirements are ANDed), across terms united (terms are ORed). One term without
    // such a requirement leaves every node possible.
    std::set<std::string> names;
    for (const auto& term : required->nodeSelectorTerms) {
      std::optional<std::set<std::string>> termNames;
      for (const auto& r : term.matchFields) {
        if (r.key != "metadata.name" || r.op != api::NodeSelectorOperator::In) continue;
        std::set<std::string> values(r.values.begin(), r.values.end());
        if (!termNames) {
          termNames = std::move(values);
        } else {
          std::set<std::string> both;
          std::set_intersection(termNames->begin(), termNames->end(), values.begin(), values.end(),
                                std::inserter(both, both.end()));
          termNames = std::move(both);
        }
      }
      if (!termNames) return Status::success();
      names.insert(termNames->begin(), termNames->end());
    }
    if (names.empty()) return Status(Code::UnschedulableAndUnresolvable, kErrReasonConflict);
    result.nodeNames = std::move(names);
    return Status::success();
  }

  Status filter(const framework::CycleState& state, const framework::PodInfo& pod,
                const framework::NodeInfo& node) const override {
    if (node.node() == nullptr) return Status::error("node not found");
    if (added_required_compiled_ &&
        !added_required_compiled_->matches(node.labels(), node.name())) {
      return Status(Code::UnschedulableAndUnresolvable, kErrReasonEnforced);
    }
    const auto* s = state.readAs<PreFilterState>(kPreFilterStateKey);
    // As upstream, Filter still works when PreFilter is disabled in the profile.
    std::optional<PreFilterState> fallback;
    if (s == nullptr) s = &fallback.emplace(*pod);
    if (!s->required.matches(node.labels(), node.name())) {
      return Status(Code::UnschedulableAndUnresolvable, kErrReasonPod);
    }
    return Status::success();
  }

  Status preScore(framework::CycleState& state, const framework::PodInfo& pod,
                  const std::vector<const framework::NodeInfo*>&) const override {
    auto s = std::make_unique<PreScoreState>();
    collectPreferred(*pod, *s);
    if (s->terms.empty()) return Status::skip();
    state.write(kPreScoreStateKey, std::move(s));
    return Status::success();
  }

  Status score(const framework::CycleState& state, const framework::PodInfo& pod,
               const framework::NodeInfo& node, int64_t& out) const override {
    const auto* s = state.readAs<PreScoreState>(kPreScoreStateKey);
    // As upstream, Score still works when PreScore is disabled in the profile.
    PreScoreState fallback;
    if (s == nullptr) {
      collectPreferred(*pod, fallback);
      s = &fallback;
    }
    out = 0;
    for (const auto& [term, weight] : s->terms) {
      if (term.matches(node.labels(), node.name())) out += weight;
    }
    return Status::success();
  }

  Status normalizeScores(const framework::CycleState&, const framework::PodInfo&,
                         std::vector<int64_t>& scores) const override {
    framework::defaultNormalizeScore(framework::kMaxNodeScore, /*reverse=*/false, scores);
    return Status::success();
  }

 private:
  void collectPreferred(const api::Pod& pod, PreScoreState& s) const {
    const auto& a = pod.spec.affinity;
    if (a && a->nodeAffinity) {
      for (const auto& t : a->nodeAffinity->preferredDuringSchedulingIgnoredDuringExecution) {
        if (t.weight != 0) s.terms.emplace_back(labels::CompiledTerm(t.preference), t.weight);
      }
    }
    for (const auto& t : added_preferred_) {
      if (t.weight != 0) s.terms.emplace_back(labels::CompiledTerm(t.preference), t.weight);
    }
  }

  static inline const api::StringMap kNoNodeSelector;
  std::optional<api::NodeSelector> added_required_;
  std::optional<labels::RequiredNodeAffinity> added_required_compiled_;  // borrows added_required_
  std::vector<api::PreferredSchedulingTerm> added_preferred_;
};

}  // namespace

util::Result<framework::PluginPtr> newNodeAffinity(const NodeAffinityArgs& args,
                                                   const framework::Handle&) {
  return framework::PluginPtr(std::make_unique<NodeAffinity>(args));
}

}  // namespace berth::plugins::nodeaffinity
