#pragma once
// The extension points, once: the plugin sets of a profile's `plugins:` and the table that names
// every point for the config decoder, the framework runtime (construction, listing, the
// metrics' extension_point label) and the scheduler's metrics. Row i of kExtensionPoints describes
// Point(i).

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace berth::config {

struct PluginRef {
  std::string name;
  int32_t weight = 0;  // score weight; 0 = unset (the runtime then uses 1, as upstream)
  std::string field;   // where it came from, for errors: "profiles[0].plugins.score.enabled[1]"
};

struct PluginSet {
  std::vector<PluginRef> enabled;
  std::vector<PluginRef> disabled;  // name "*" disables all defaults of this point
};

// Extension points as in the config file (Permit/PreBind/PostBind exist for compatibility).
struct Plugins {
  PluginSet preEnqueue, queueSort, preFilter, filter, postFilter, preScore, score, reserve, permit,
      preBind, bind, postBind, multiPoint;
};

enum class Point : uint8_t {
  PreEnqueue,
  QueueSort,
  PreFilter,
  Filter,
  PostFilter,
  PreScore,
  Score,
  NormalizeScore,
  Reserve,
  Permit,
  PreBind,
  Bind,
  PostBind,
  MultiPoint,
};

struct ExtensionPoint {
  Point point;
  std::string_view name;    // "PreFilter": listings, errors and metric labels
  std::string_view field;   // "preFilter" under a profile's plugins; empty when not configurable
  PluginSet Plugins::*set;  // nullptr when not configurable
  // berth has plugins for this point and the runtime runs them. MultiPoint is no point of its own:
  // its plugins are expanded into the implemented points.
  bool implemented;
};

inline constexpr ExtensionPoint kExtensionPoints[] = {
    {Point::PreEnqueue, "PreEnqueue", "preEnqueue", &Plugins::preEnqueue, false},
    {Point::QueueSort, "QueueSort", "queueSort", &Plugins::queueSort, true},
    {Point::PreFilter, "PreFilter", "preFilter", &Plugins::preFilter, true},
    {Point::Filter, "Filter", "filter", &Plugins::filter, true},
    {Point::PostFilter, "PostFilter", "postFilter", &Plugins::postFilter, true},
    {Point::PreScore, "PreScore", "preScore", &Plugins::preScore, true},
    {Point::Score, "Score", "score", &Plugins::score, true},
    // Score's normalization step, timed on its own; configured with Score.
    {Point::NormalizeScore, "NormalizeScore", "", nullptr, true},
    {Point::Reserve, "Reserve", "reserve", &Plugins::reserve, true},
    {Point::Permit, "Permit", "permit", &Plugins::permit, false},
    {Point::PreBind, "PreBind", "preBind", &Plugins::preBind, false},
    {Point::Bind, "Bind", "bind", &Plugins::bind, true},
    {Point::PostBind, "PostBind", "postBind", &Plugins::postBind, false},
    {Point::MultiPoint, "MultiPoint", "multiPoint", &Plugins::multiPoint, false},
};
inline constexpr size_t kPointCount = std::size(kExtensionPoints);

constexpr const ExtensionPoint& extensionPoint(Point point) {
  return kExtensionPoints[static_cast<size_t>(point)];
}
constexpr std::string_view pointName(Point point) { return extensionPoint(point).name; }

static_assert([] {
  for (size_t i = 0; i < kPointCount; ++i) {
    if (static_cast<size_t>(kExtensionPoints[i].point) != i) return false;
  }
  return true;
}());

}  // namespace berth::config
