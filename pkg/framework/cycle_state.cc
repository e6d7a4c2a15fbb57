#include "pkg/framework/cycle_state.h"

#include <algorithm>
#include <atomic>

namespace berth::framework {

StateKey makeStateKey(std::string_view /*name*/) {
  static std::atomic<int> next{0};
  return StateKey{next++};
}

void CycleState::write(StateKey key, std::unique_ptr<StateData> data) {
  auto i = static_cast<size_t>(key.index);
  if (i >= data_.size()) data_.resize(i + 1);
  data_[i] = std::move(data);
}

bool CycleState::filterSkipped(std::string_view plugin) const {
  return std::find(skip_filter_.begin(), skip_filter_.end(), plugin) != skip_filter_.end();
}

bool CycleState::scoreSkipped(std::string_view plugin) const {
  return std::find(skip_score_.begin(), skip_score_.end(), plugin) != skip_score_.end();
}

CycleState CycleState::clone() const {
  CycleState c;
  c.data_.resize(data_.size());
  for (size_t i = 0; i < data_.size(); ++i) {
    if (data_[i]) c.data_[i] = data_[i]->clone();
  }
  c.skip_filter_ = skip_filter_;
  c.skip_score_ = skip_score_;
  c.snapshot_ = snapshot_;
  c.record_plugin_metrics_ = record_plugin_metrics_;
  c.stop_token_ = stop_token_;
  return c;
}

}  // namespace berth::framework
