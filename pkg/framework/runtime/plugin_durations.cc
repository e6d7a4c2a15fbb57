#include "pkg/framework/runtime/plugin_durations.h"

#include <algorithm>

namespace berth::framework::runtime {

const std::array<double, PluginDurations::kBucketCount>& PluginDurations::bucketBounds() {
  static const std::array<double, kBucketCount> bounds = [] {
    std::array<double, kBucketCount> b{};
    double v = 0.00001;
    for (double& x : b) {
      x = v;
      v *= 1.5;
    }
    return b;
  }();
  return bounds;
}

PluginDurations::PluginDurations(const std::vector<std::string>& plugins)
    : plugins_(plugins), slots_(new Slot[plugins.size() * config::kPointCount * kCodeCount]) {
  for (size_t i = 0; i < plugins_.size(); ++i) index_.emplace(plugins_[i], i);
}

void PluginDurations::observe(std::string_view plugin, Point point, Code code,
                              std::chrono::steady_clock::duration took) {
  auto it = index_.find(plugin);
  const auto c = static_cast<size_t>(code);
  if (it == index_.end() || c >= kCodeCount) return;
  Slot& slot =
      slots_[(it->second * config::kPointCount + static_cast<size_t>(point)) * kCodeCount + c];
  const double seconds = std::chrono::duration<double>(took).count();
  const auto& bounds = bucketBounds();
  const size_t bucket =
      static_cast<size_t>(std::lower_bound(bounds.begin(), bounds.end(), seconds) - bounds.begin());
  slot.buckets[bucket].fetch_add(1, std::memory_order_relaxed);
  slot.sumNanos.fetch_add(
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(took).count()),
      std::memory_order_relaxed);
  slot.count.fetch_add(1, std::memory_order_relaxed);
}

std::vector<PluginDurations::Series> PluginDurations::snapshot() const {
  std::vector<Series> out;
  for (size_t p = 0; p < plugins_.size(); ++p) {
    for (size_t point = 0; point < config::kPointCount; ++point) {
      for (size_t c = 0; c < kCodeCount; ++c) {
        const Slot& slot = slots_[(p * config::kPointCount + point) * kCodeCount + c];
        const uint64_t count = slot.count.load(std::memory_order_relaxed);
        if (count == 0) continue;
        Series s;
        s.plugin = plugins_[p];
        s.extensionPoint = pointName(static_cast<Point>(point));
        s.status = codeName(static_cast<Code>(c));
        uint64_t running = 0;
        for (size_t b = 0; b < kBucketCount; ++b) {
          running += slot.buckets[b].load(std::memory_order_relaxed);
          s.cumulative[b] = running;
        }
        // Read apart from the buckets, so a concurrent observation may show in one and not the
        // other; the +Inf bucket is the count, which keeps the exposition self-consistent.
        s.count = std::max(count, running);
        s.sumSeconds = static_cast<double>(slot.sumNanos.load(std::memory_order_relaxed)) / 1e9;
        out.push_back(std::move(s));
      }
    }
  }
  return out;
}

}  // namespace berth::framework::runtime
