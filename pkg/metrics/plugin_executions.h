#pragma once
// scheduler_plugin_execution_duration_seconds as /metrics reports it: each profile's framework
// times its own plugin calls, and this merges those series into upstream's, which have no profile
// label.

#include <cstdint>
#include <string>
#include <vector>

#include "pkg/metrics/metrics.h"

namespace berth::metrics {

// One framework's series for a plugin at an extension point with a status.
struct PluginExecution {
  std::string plugin;
  std::string extensionPoint;
  std::string status;
  std::vector<uint64_t> cumulative;  // parallel to the bounds
  uint64_t count = 0;
  double sumSeconds = 0;
};

// Sums the executions with the same plugin, extension point and status (from several profiles)
// into one series each, ordered by plugin, extension point and status.
std::vector<HistogramSeries> pluginExecutionSeries(const std::vector<PluginExecution>& executions,
                                                   const std::vector<double>& bounds);

}  // namespace berth::metrics
