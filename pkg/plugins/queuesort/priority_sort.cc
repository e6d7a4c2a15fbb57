#include "pkg/plugins/queuesort/priority_sort.h"

#include "pkg/plugins/names.h"

namespace berth::plugins::queuesort {
namespace {

class PrioritySort final : public framework::QueueSortPlugin {
 public:
  std::string_view name() const override { return names::kPrioritySort; }
  bool nodeLocal() const override { return true; }

  bool less(const framework::QueuedPodInfo& a, const framework::QueuedPodInfo& b) const override {
    int32_t pa = a.podInfo->pod->spec.priority.value_or(0);
    int32_t pb = b.podInfo->pod->spec.priority.value_or(0);
    return pa > pb || (pa == pb && a.timestamp < b.timestamp);
  }
};

}  // namespace

util::Result<framework::PluginPtr> newPrioritySort(const framework::Handle&) {
  return framework::PluginPtr(std::make_unique<PrioritySort>());
}

}  // namespace berth::plugins::queuesort
