#include "pkg/plugins/tainttoleration/taint_toleration.h"

#include "pkg/labels/selector.h"
#include "pkg/plugins/names.h"

namespace berth::plugins::tainttoleration {
namespace {

using framework::Code;
using framework::Status;

const framework::StateKey kPreScoreStateKey = framework::makeStateKey("PreScoreTaintToleration");

// The pod's tolerations that can tolerate PreferNoSchedule taints (empty effect means all effects).
struct PreScoreState final : framework::StateData {
  std::vector<api::Toleration> preferNoSchedule;
  std::unique_ptr<framework::StateData> clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
};

// Whether the pod tolerates every NoSchedule and NoExecute taint of the node (Filter's test).
bool toleratesNode(const api::Pod& pod, const api::Node& node) {
  for (const auto& taint : node.spec.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    if (!labels::toleratesAny(pod.spec.tolerations, taint)) return false;
  }
  return true;
}

class TaintToleration final : public framework::FilterPlugin,
                              public framework::PreScorePlugin,
                              public framework::ScorePlugin,
                              public framework::EnqueueExtensions {
 public:
  std::string_view name() const override { return names::kTaintToleration; }
  bool nodeLocal() const override { return true; }

  // A node added, or whose taints changed, that the pod now tolerates and did not before.
  std::vector<framework::ClusterEventWithHint> eventsToRegister() const override {
    using framework::ActionType;
    return {{framework::ClusterEvent{framework::EventResource::Node,
                                     ActionType::Add | ActionType::UpdateNodeTaint},
             framework::queueWhenNodeNowPasses(toleratesNode)}};
  }

  Status filter(const framework::CycleState&, const framework::PodInfo& pod,
                const framework::NodeInfo& node) const override {
    if (node.node() == nullptr) return Status::error("invalid nodeInfo");
    for (const auto& taint : node.taints()) {
      if (taint.effect != api::kTaintEffectNoSchedule && taint.effect != api::kTaintEffectNoExecute)
        continue;
      if (labels::toleratesAny(pod->spec.tolerations, taint)) continue;
      // The v1.25–v1.34 wording, which names the taint (v1.35 shortened it to "untolerated
      // taint(s)").
      return Status(Code::UnschedulableAndUnresolvable,
                    std::array<std::string_view, 5>{"node(s) had untolerated taint {", taint.key,
                                                    ": ", taint.value, "}"});
    }
    return Status::success();
  }

  Status preScore(framework::CycleState& state, const framework::PodInfo& pod,
                  const std::vector<const framework::NodeInfo*>&) const override {
    auto s = std::make_unique<PreScoreState>();
    for (const auto& t : pod->spec.tolerations) {
      if (t.effect.empty() || t.effect == api::kTaintEffectPreferNoSchedule)
        s->preferNoSchedule.push_back(t);
    }
    state.write(kPreScoreStateKey, std::move(s));
    return Status::success();
  }

  Status score(const framework::CycleState& state, const framework::PodInfo&,
               const framework::NodeInfo& node, int64_t& out) const override {
    const auto* s = state.readAs<PreScoreState>(kPreScoreStateKey);
    if (s == nullptr) return Status::error("reading \"PreScoreTaintToleration\" from cycleState");
    out = 0;
    for (const auto& taint : node.taints()) {
      if (taint.effect == api::kTaintEffectPreferNoSchedule &&
          !labels::toleratesAny(s->preferNoSchedule, taint)) {
        ++out;
      }
    }
    return Status::success();
  }

  // More untolerated PreferNoSchedule taints, lower score.
  Status normalizeScores(const framework::CycleState&, const framework::PodInfo&,
                         std::vector<int64_t>& scores) const override {
    framework::defaultNormalizeScore(framework::kMaxNodeScore, /*reverse=*/true, scores);
    return Status::success();
  }
};

}  // namespace

util::Result<framework::PluginPtr> newTaintToleration(const framework::Handle&) {
  return framework::PluginPtr(std::make_unique<TaintToleration>());
}

}  // namespace berth::plugins::tainttoleration
