#pragma once
// PluginDurations: scheduler_plugin_execution_duration_seconds, recorded by the framework runtime
// on the sampled scheduling cycles (upstream: 10%, CycleState::recordPluginMetrics). A sampled
// cycle times every plugin call, Filter and Score once per node, from the parallel workers at
// once, so each series is a fixed array of atomic bucket counters: an observation is a search over
// 20 bounds and two relaxed atomic adds, with no lock and no allocation. The series exist from the
// framework's creation on (every plugin x its extension points x status), so lookups never insert.

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pkg/config/extension_points.h"
#include "pkg/framework/status.h"

namespace berth::framework::runtime {

// A plugin call is timed at its extension point (a row of config::kExtensionPoints).
using config::Point;
using config::pointName;

class PluginDurations {
 public:
  // Upstream's buckets: Exp(0.00001, 1.5, 20), i.e. 10 µs to about 22 ms.
  static constexpr size_t kBucketCount = 20;
  static const std::array<double, kBucketCount>& bucketBounds();

  // One series as read at scrape time; buckets are cumulative, as Prometheus exposes them.
  struct Series {
    std::string plugin;
    std::string_view extensionPoint;
    std::string_view status;
    std::array<uint64_t, kBucketCount> cumulative{};
    uint64_t count = 0;
    double sumSeconds = 0;
  };

  // `plugins`: every plugin name the framework runs (each gets a slot per point and status).
  explicit PluginDurations(const std::vector<std::string>& plugins);

  // Thread-safe and lock-free. A plugin not given at construction is ignored.
  void observe(std::string_view plugin, Point point, Code code,
               std::chrono::steady_clock::duration took);
  // The series observed at least once.
  std::vector<Series> snapshot() const;

 private:
  static constexpr size_t kCodeCount = 5;  // Success, Error, Unschedulable, ...Unresolvable, Skip
  struct Slot {
    std::array<std::atomic<uint64_t>, kBucketCount + 1> buckets{};  // the last one is +Inf
    std::atomic<uint64_t> count{0};
    std::atomic<uint64_t> sumNanos{0};
  };
  std::vector<std::string> plugins_;
  std::unordered_map<std::string_view, size_t> index_;  // into plugins_; keys view plugins_
  std::unique_ptr<Slot[]> slots_;                       // [plugin][point][code]
};

}  // namespace berth::framework::runtime
