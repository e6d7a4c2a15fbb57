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
  // berth has plugins for this point and the runtime runs them. MultiPoint is no point of its own:
  // its plugins are expanded into the implemented points.
  bool implemented;
  std::string_view name;    // "PreFilter": listings, errors and metric labels
  std::string_view field;   // "preFilter" under a profile's plugins; empty when not configurable
  PluginSet Plugins::*set;  // nullptr when not configurable
};

inline constexpr ExtensionPoint kExtensionPoints[] = {
    {Point::PreEnqueue, false, "PreEnqueue", "preEnqueue", &Plugins::preEnqueue},
    {Point::QueueSort, true, "QueueSort", "queueSort", &Plugins::queueSort},
    {Point::PreFilter, true, "PreFilter", "preFilter", &Plugins::preFilter},
    {Point::Filter, true, "Filter", "filter", &Plugins::filter},
    {Point::PostFilter, true, "PostFilter", "postFilter", &Plugins::postFilter},
    {Point::PreScore, true, "PreScore", "preScore", &Plugins::preScore},
    {Point::Score, true, "Score", "score", &Plugins::score},
    // Score's normalization step, timed on its own; configured with Score.
    {Point::NormalizeScore, true, "NormalizeScore", "", nullptr},
    {Point::Reserve, true, "Reserve", "reserve", &Plugins::reserve},
    {Point::Permit, false, "Permit", "permit", &Plugins::permit},
    {Point::PreBind, true, "PreBind", "preBind", &Plugins::preBind},
    {Point::Bind, true, "Bind", "bind", &Plugins::bind},
    {Point::PostBind, false, "PostBind", "postBind", &Plugins::postBind},
    {Point::MultiPoint, false, "MultiPoint", "multiPoint", &Plugins::multiPoint},
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
