#include "pkg/plugins/nodeports/node_ports.h"

#include "pkg/plugins/names.h"

namespace berth::plugins::nodeports {
namespace {

class NodePorts final : public framework::PreFilterPlugin,
                        public framework::FilterPlugin,
                        public framework::EnqueueExtensions {
 public:
  std::string_view name() const override { return names::kNodePorts; }
  bool nodeLocal() const override { return true; }

  // A new node has every port free; a deleted pod frees its ports, which helps only a pod wanting
  // one of them. (Ports are immutable, so pod updates cannot help.)
  std::vector<framework::ClusterEventWithHint> eventsToRegister() const override {
    using framework::ActionType;
    using framework::EventResource;
    using framework::QueueingHint;
    framework::ClusterEventWithHint podDeleted{
        framework::ClusterEvent{EventResource::AssignedPod, ActionType::Delete}};
    podDeleted.podHint = [](const api::Pod& pod, const api::Pod* deleted, const api::Pod*) {
      if (deleted == nullptr) return QueueingHint::Queue;
      // Borrowed, not owned: PodInfo only reads the pods to collect their ports.
      const framework::PodInfo wanted(api::PodPtr(api::PodPtr(), &pod));
      const framework::PodInfo freed(api::PodPtr(api::PodPtr(), deleted));
      framework::HostPortInfo used;
      for (const auto& p : freed.hostPorts) used.add(p);
      for (const auto& p : wanted.hostPorts) {
        if (used.conflicts(p)) return QueueingHint::Queue;
      }
      return QueueingHint::Skip;
    };
    return {framework::ClusterEventWithHint{
                framework::ClusterEvent{EventResource::Node, ActionType::Add}},
            std::move(podDeleted)};
  }

  // The pod's host ports are precomputed in PodInfo; a pod without any skips Filter.
  framework::Status preFilter(framework::CycleState&, const framework::PodInfo& pod,
                              framework::PreFilterResult&) const override {
    return pod.hostPorts.empty() ? framework::Status::skip() : framework::Status::success();
  }

  framework::Status filter(const framework::CycleState&, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) const override {
    for (const auto& p : pod.hostPorts) {
      if (node.usedPorts().conflicts(p)) {
        return framework::Status(framework::Code::Unschedulable, kErrReason);
      }
    }
    return framework::Status::success();
  }
};

}  // namespace

util::Result<framework::PluginPtr> newNodePorts(const framework::Handle&) {
  return framework::PluginPtr(std::make_unique<NodePorts>());
}

}  // namespace berth::plugins::nodeports
