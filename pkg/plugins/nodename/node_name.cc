#include "pkg/plugins/nodename/node_name.h"

#include "pkg/plugins/names.h"

namespace berth::plugins::nodename {
namespace {

class NodeName final : public framework::FilterPlugin, public framework::EnqueueExtensions {
 public:
  std::string_view name() const override { return names::kNodeName; }
  bool nodeLocal() const override { return true; }

  // Only the node the pod names can take it: its arrival.
  std::vector<framework::ClusterEventWithHint> eventsToRegister() const override {
    using framework::QueueingHint;
    return {{framework::ClusterEvent{framework::EventResource::Node, framework::ActionType::Add},
             [](const api::Pod& pod, const api::Node*, const api::Node* added) {
               const std::string& wanted = pod.spec.nodeName;
               return wanted.empty() || wanted == added->metadata.name ? QueueingHint::Queue
                                                                       : QueueingHint::Skip;
             }}};
  }

  framework::Status filter(const framework::CycleState&, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) const override {
    const std::string& wanted = pod->spec.nodeName;
    if (wanted.empty() || wanted == node.name()) return framework::Status::success();
    return framework::Status(framework::Code::UnschedulableAndUnresolvable, kErrReason);
  }
};

}  // namespace

util::Result<framework::PluginPtr> newNodeName(const framework::Handle&) {
  return framework::PluginPtr(std::make_unique<NodeName>());
}

}  // namespace berth::plugins::nodename
