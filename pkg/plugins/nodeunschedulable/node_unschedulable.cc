#include "pkg/plugins/nodeunschedulable/node_unschedulable.h"

#include "pkg/labels/selector.h"
#include "pkg/plugins/names.h"

namespace berth::plugins::nodeunschedulable {
namespace {

class NodeUnschedulable final : public framework::FilterPlugin,
                                public framework::EnqueueExtensions {
 public:
  std::string_view name() const override { return names::kNodeUnschedulable; }
  bool nodeLocal() const override { return true; }

  // A node added schedulable, or uncordoned (an UpdateNodeTaint, as upstream); other taint changes
  // of a node still cordoned do not help.
  std::vector<framework::ClusterEventWithHint> eventsToRegister() const override {
    using framework::ActionType;
    return {{framework::ClusterEvent{framework::EventResource::Node,
                                     ActionType::Add | ActionType::UpdateNodeTaint},
             framework::queueWhenNodeNowPasses(
                 [](const api::Pod&, const api::Node& node) { return !node.spec.unschedulable; })}};
  }

  framework::Status filter(const framework::CycleState&, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) const override {
    using framework::Code;
    if (node.node() == nullptr) {
      return framework::Status(Code::UnschedulableAndUnresolvable, kErrReasonUnknownCondition);
    }
    if (!node.unschedulable()) return framework::Status::success();
    static const api::Taint kCordon{std::string(kTaintNodeUnschedulable), "",
                                    std::string(api::kTaintEffectNoSchedule)};
    if (labels::toleratesAny(pod->spec.tolerations, kCordon)) return framework::Status::success();
    return framework::Status(Code::UnschedulableAndUnresolvable, kErrReasonUnschedulable);
  }
};

}  // namespace

util::Result<framework::PluginPtr> newNodeUnschedulable(const framework::Handle&) {
  return framework::PluginPtr(std::make_unique<NodeUnschedulable>());
}

}  // namespace berth::plugins::nodeunschedulable
