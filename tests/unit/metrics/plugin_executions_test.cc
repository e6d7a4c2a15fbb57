#include "pkg/metrics/plugin_executions.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace berth::metrics {
namespace {

PluginExecution execution(std::string plugin, std::string point, uint64_t count) {
  return PluginExecution{std::move(plugin),
                         std::move(point),
                         "Success",
                         {count, count},
                         count,
                         0.5 * static_cast<double>(count)};
}

TEST(PluginExecutionSeries, SumsTheSameSeriesOfSeveralProfiles) {
  const std::vector<double> bounds{0.001, 0.01};
  auto series = pluginExecutionSeries(
      {execution("NodeName", "Filter", 2), execution("NodeName", "Filter", 3)}, bounds);
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].count, 5u);
  EXPECT_DOUBLE_EQ(series[0].sum, 2.5);
  EXPECT_EQ(series[0].cumulative, (std::vector<uint64_t>{5, 5}));
  EXPECT_EQ(series[0].bounds, bounds);
  const std::vector<std::pair<std::string, std::string>> labels{
      {"extension_point", "Filter"}, {"plugin", "NodeName"}, {"status", "Success"}};
  EXPECT_EQ(series[0].labels, labels);
}

TEST(PluginExecutionSeries, OrdersByPluginThenExtensionPoint) {
  auto series =
      pluginExecutionSeries({execution("TaintToleration", "Filter", 1),
                             execution("NodeName", "Score", 1), execution("NodeName", "Filter", 1)},
                            {0.001});
  ASSERT_EQ(series.size(), 3u);
  EXPECT_EQ(series[0].labels[1].second, "NodeName");
  EXPECT_EQ(series[0].labels[0].second, "Filter");
  EXPECT_EQ(series[1].labels[0].second, "Score");
  EXPECT_EQ(series[2].labels[1].second, "TaintToleration");
}

}  // namespace
}  // namespace berth::metrics
