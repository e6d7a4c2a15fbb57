#include "pkg/plugins/nodeports/node_ports.h"

#include "pkg/plugins/names.h"

namespace berth::plugins::nodeports {
namespace {

class NodePorts final : public framework::PreFilterPlugin, public framework::FilterPlugin {
 public:
  std::string_view name() const override { return names::kNodePorts; }

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
