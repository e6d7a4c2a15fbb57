#pragma once
// CycleState: per-scheduling-cycle scratch space. A plugin writes its data once (PreFilter,
// PreScore) and reads it many times (Filter, Score, once per node), so reads are an index into a
// vector: each plugin obtains a StateKey once, at static-initialisation or construction time.

#include <memory>
#include <stop_token>
#include <string_view>
#include <utility>
#include <vector>

namespace berth::framework {

class Snapshot;

class StateData {
 public:
  virtual ~StateData() = default;
  // A deep copy, for a cycle state that is cloned (e.g. to evaluate what-if placements).
  virtual std::unique_ptr<StateData> clone() const = 0;
};

// A process-wide index for one kind of state entry; names are for debugging only.
struct StateKey {
  int index = -1;
};
StateKey makeStateKey(std::string_view name);

class CycleState {
 public:
  CycleState() = default;
  CycleState(CycleState&&) = default;
  CycleState& operator=(CycleState&&) = default;

  void write(StateKey key, std::unique_ptr<StateData> data);
  // The entry for key, or nullptr if never written in this cycle.
  const StateData* read(StateKey key) const {
    auto i = static_cast<size_t>(key.index);
    return i < data_.size() ? data_[i].get() : nullptr;
  }
  template <typename T>
  const T* readAs(StateKey key) const {
    return static_cast<const T*>(read(key));
  }

  // Plugins whose PreFilter/PreScore returned Skip; the runtime then skips their Filter/Score.
  void skipFilter(std::string_view plugin) { skip_filter_.push_back(plugin); }
  void skipScore(std::string_view plugin) { skip_score_.push_back(plugin); }
  bool filterSkipped(std::string_view plugin) const;
  bool scoreSkipped(std::string_view plugin) const;

  CycleState clone() const;

  // The nodes this cycle schedules over (set by the algorithm before PreFilter): plugins that read
  // other nodes (InterPodAffinity, PodTopologySpread) find them here. Null outside a cycle.
  const Snapshot* snapshot() const { return snapshot_; }
  void setSnapshot(const Snapshot* snapshot) { snapshot_ = snapshot; }

  // Whether this cycle times each plugin call for scheduler_plugin_execution_duration_seconds
  // (the scheduler samples 10% of cycles, as upstream).
  bool recordPluginMetrics() const { return record_plugin_metrics_; }
  void setRecordPluginMetrics(bool record) { record_plugin_metrics_ = record; }
  // Requested when the binding cycle's waits must end: the scheduler shuts down or the pod was
  // deleted (PreBind's waits for volumes return at once). Never requested by default.
  const std::stop_token& stopToken() const { return stop_token_; }
  void setStopToken(std::stop_token token) { stop_token_ = std::move(token); }

 private:
  std::vector<std::unique_ptr<StateData>> data_;
  std::vector<std::string_view> skip_filter_;  // plugin names are owned by the plugins
  std::vector<std::string_view> skip_score_;
  const Snapshot* snapshot_ = nullptr;  // not owned
  bool record_plugin_metrics_ = false;
  std::stop_token stop_token_;
};

}  // namespace berth::framework
