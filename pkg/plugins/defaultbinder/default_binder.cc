#include "pkg/plugins/defaultbinder/default_binder.h"

#include "pkg/plugins/names.h"

namespace berth::plugins::defaultbinder {
namespace {

class DefaultBinder final : public framework::BindPlugin {
 public:
  explicit DefaultBinder(framework::PodBinder* binder) : binder_(binder) {}

  std::string_view name() const override { return names::kDefaultBinder; }
  bool nodeLocal() const override { return true; }

  framework::Status bind(framework::CycleState&, const framework::PodInfo& pod,
                         const std::string& node) const override {
    if (binder_ == nullptr) return framework::Status::error("no binder configured");
    return binder_->bind(*pod.pod, node);
  }

 private:
  framework::PodBinder* binder_;
};

}  // namespace

util::Result<framework::PluginPtr> newDefaultBinder(const framework::Handle& handle) {
  return framework::PluginPtr(std::make_unique<DefaultBinder>(handle.binder));
}

}  // namespace berth::plugins::defaultbinder
