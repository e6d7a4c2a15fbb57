#include "pkg/metrics/plugin_executions.h"

#include <map>
#include <string_view>
#include <tuple>
#include <utility>

namespace berth::metrics {

std::vector<HistogramSeries> pluginExecutionSeries(const std::vector<PluginExecution>& executions,
                                                   const std::vector<double>& bounds) {
  // The keys view the strings of `executions`, which outlive the map.
  using Key = std::tuple<std::string_view, std::string_view, std::string_view>;
  std::map<Key, PluginExecution> merged;
  for (const PluginExecution& e : executions) {
    auto [it, fresh] = merged.try_emplace(Key(e.plugin, e.extensionPoint, e.status), e);
    if (fresh) continue;
    for (size_t b = 0; b < e.cumulative.size() && b < it->second.cumulative.size(); ++b) {
      it->second.cumulative[b] += e.cumulative[b];
    }
    it->second.count += e.count;
    it->second.sumSeconds += e.sumSeconds;
  }
  std::vector<HistogramSeries> series;
  series.reserve(merged.size());
  for (auto& [key, e] : merged) {
    HistogramSeries h;
    h.labels = {{"extension_point", e.extensionPoint}, {"plugin", e.plugin}, {"status", e.status}};
    h.bounds = bounds;
    h.cumulative = std::move(e.cumulative);
    h.count = e.count;
    h.sum = e.sumSeconds;
    series.push_back(std::move(h));
  }
  return series;
}

}  // namespace berth::metrics
